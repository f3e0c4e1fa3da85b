// precision=fp16 on a backend: the float16 model it loads and the float16 overflow points (see
// precision.h).
#include "comparator/precision.h"

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

Expected<LoadedModel> write_fp16_model(const onnx::ModelProto& model,
                                       const std::filesystem::path& base_dir,
                                       const std::filesystem::path& path) {
  LoadedModel out;
  out.proto = model;
  out.path = path;
  out.base_dir = base_dir;
  if (auto converted = convert_model_to_fp16(out.proto, base_dir); !converted)
    return converted.status();
  if (Status st = save_model(out.proto, path); !st)
    return std::move(st).with_context("while converting to float16");
  return out;
}

std::vector<Expected<std::vector<Fp16Overflow>>> find_fp16_overflows(
    const LoadedModel& model, const std::vector<TensorMap>& samples) {
  auto interpreter = reference::Interpreter::create(model.proto, model.base_dir);
  std::vector<Expected<std::vector<Fp16Overflow>>> out;
  if (!interpreter) {
    for (size_t i = 0; i < samples.size(); ++i) out.emplace_back(interpreter.status());
    return out;
  }
  for (const TensorMap& inputs : samples) {
    std::vector<Fp16Overflow> found;
    auto hook = [&](const onnx::NodeProto& node, size_t index, const std::string& name,
                    const Tensor& value) {
      if (value.dtype() != DType::kFloat) return;
      const float* v = value.data<float>();
      double max_abs = 0;
      for (int64_t i = 0; i < value.numel(); ++i)
        if (std::isfinite(v[i])) max_abs = std::max(max_abs, std::fabs(static_cast<double>(v[i])));
      if (max_abs > kFloat16Max)
        found.push_back({name, node.name(), node.op_type(), index, max_abs});
    };
    auto ran = (*interpreter)->run(inputs, hook);
    if (ran)
      out.emplace_back(std::move(found));
    else
      out.emplace_back(ran.status());
  }
  return out;
}

}  // namespace onnxdbg
