// precision=fp16 on a backend: the float16 model it loads and the float16 overflow points (see
// precision.h).
#include "runner/precision.h"

#include <cmath>
#include <cstring>

#include "model/model.h"
#include "reference/interpreter.h"
#include "surgeon/surgeon.h"

namespace onnxdbg {

Expected<std::string> spec_precision(const BackendSpec& spec) {
  const std::string p = spec.option("precision", "fp32");
  if (p != "fp32" && p != "fp16")
    return invalid_argument("backend " + spec.name + ": precision must be fp32 or fp16, not '" + p +
                            "'");
  return p;
}

BackendSpec without_precision(const BackendSpec& spec) {
  BackendSpec s = spec;
  s.options.erase("precision");
  return s;
}

bool holds_non_float16_values(const Tensor& t) {
  if (t.dtype() != DType::kFloat) return false;
  const float* p = t.data<float>();
  uint32_t any = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint32_t u;
    std::memcpy(&u, p + i, sizeof u);
    any |= u;
  }
  return (any & 0x1fffu) != 0;
}

Expected<int64_t> convert_model_to_fp16(onnx::ModelProto& model,
                                        const std::filesystem::path& base_dir) {
  surgeon::Fp16Options options;
  options.keep_io_types = true;
  auto stats = surgeon::to_fp16(model, base_dir, options);
  if (!stats) return std::move(stats).status().with_context("while converting to float16");
  return stats->casts_inserted;
}

std::string float32_compute_reason(const std::string& backend) {
  if (backend != "onnxruntime") return "";
  return " (ONNX Runtime's CPU provider has float16 kernels for few ops; it casts around the "
         "others and drops the float16 round trips between them)";
}

Expected<std::filesystem::path> write_fp16_model(const std::filesystem::path& model_path,
                                                 const std::filesystem::path& dir) {
  auto fail = [](Status st) { return std::move(st).with_context("while converting to float16"); };
  auto model = load_model(model_path);
  if (!model) return fail(model.status());
  if (auto converted = convert_model_to_fp16(model->proto, model->base_dir); !converted)
    return converted.status();
  const std::filesystem::path out = dir / (model_path.stem().string() + "_fp16.onnx");
  if (Status st = save_model(model->proto, out); !st) return fail(st);
  return out;
}

Expected<std::vector<Fp16Overflow>> find_fp16_overflows(const std::filesystem::path& model_path,
                                                        const TensorMap& inputs) {
  ODB_ASSIGN_OR_RETURN(LoadedModel model, load_model(model_path));
  ODB_ASSIGN_OR_RETURN(auto interpreter,
                       reference::Interpreter::create(model.proto, model.base_dir));
  std::vector<Fp16Overflow> found;
  auto hook = [&](const onnx::NodeProto& node, size_t index, const std::string& name,
                  const Tensor& value) {
    if (value.dtype() != DType::kFloat) return;
    const float* v = value.data<float>();
    double max_abs = 0;
    for (int64_t i = 0; i < value.numel(); ++i)
      if (std::isfinite(v[i])) max_abs = std::max(max_abs, std::fabs(static_cast<double>(v[i])));
    if (max_abs > kFloat16Max) found.push_back({name, node.name(), node.op_type(), index, max_abs});
  };
  ODB_ASSIGN_OR_RETURN(auto outputs, interpreter->run(inputs, hook));
  (void)outputs;
  return found;
}

}  // namespace onnxdbg
