// Scaler (ai.onnx.ml Scaler-1): Y = (X - offset) * scale, element-wise along the last axis;
// `offset` and `scale` have one entry per feature (X's last dimension) or one for all. Output
// float, X's shape.
#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status scaler(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const DType t = x->dtype();
  if (t != DType::kInt32 && t != DType::kInt64 && t != DType::kFloat && t != DType::kDouble)
    return model_error(ctx.describe() + " takes int32, int64, float or double input, got " +
                       std::string(dtype_name(t)));
  const std::vector<float> offset = ctx.attr_floats("offset"), scale = ctx.attr_floats("scale");
  const int64_t c = x->rank() == 0 ? 1 : x->dim(x->rank() - 1);
  using Named = std::pair<const char*, const std::vector<float>*>;
  for (const auto& [name, v] : {Named{"offset", &offset}, Named{"scale", &scale}})
    if (v->size() != 1 && static_cast<int64_t>(v->size()) != c)
      return model_error(ctx.describe() + " has " + std::to_string(v->size()) + " " + name +
                         " values for " + std::to_string(c) +
                         " features (give one per feature or one for all)");
  Tensor y(DType::kFloat, x->shape());
  for (int64_t i = 0; i < x->numel(); ++i) {
    const size_t j = static_cast<size_t>(c ? i % c : 0);
    const double o = offset.size() == 1 ? offset[0] : offset[j];
    const double s = scale.size() == 1 ? scale[0] : scale[j];
    y.data<float>()[i] = static_cast<float>((x->get_as_double(i) - o) * s);
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_scaler(KernelRegistry& r) {
  r.add("Scaler", 1, scaler, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
