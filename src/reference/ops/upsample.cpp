// Upsample (ONNX Upsample-7/9, deprecated at 10): nearest or linear resampling by `scales` (an
// attribute at 7, an input at 9) with asymmetric coordinates, like Resize-10.
#include "reference/ops/resize_util.h"

namespace onnxdbg::reference {
namespace {

Status upsample(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ResizeParams p;
  const std::string mode = ctx.attr_string("mode", "nearest");
  if (mode == "nearest")
    p.mode = ResizeMode::kNearest;
  else if (mode == "linear" || mode == "bilinear")
    p.mode = ResizeMode::kLinear;
  else
    return model_error(ctx.describe() + ": unknown mode '" + mode + "'");
  p.coordinate_mode = "asymmetric";
  p.nearest_mode = "legacy";
  if (ctx.opset() < 9) {
    for (float s : ctx.attr_floats("scales")) p.scales.push_back(s);
  } else {
    ODB_ASSIGN_OR_RETURN(const Tensor* st, ctx.required_input(1));
    if (st->dtype() != DType::kFloat)
      return model_error(ctx.describe() + ": scales must be float32, got " +
                         std::string(dtype_name(st->dtype())));
    for (int64_t i = 0; i < st->numel(); ++i) p.scales.push_back(st->data<float>()[i]);
  }
  if (p.scales.size() != x->shape().size())
    return model_error(ctx.describe() + ": scales has " + std::to_string(p.scales.size()) +
                       " entries for an input of shape " + shape_to_string(x->shape()));
  for (size_t d = 0; d < p.scales.size(); ++d) {
    if (!(p.scales[d] >= 1) || !std::isfinite(p.scales[d]))
      return model_error(ctx.describe() + ": scale " + std::to_string(p.scales[d]) + " of axis " +
                         std::to_string(d) + " must be >= 1");
    p.out_shape.push_back(
        static_cast<int64_t>(std::floor(p.scales[d] * static_cast<double>(x->shape()[d]))));
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, resize_tensor(ctx, *x, p));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_upsample(KernelRegistry& r) {
  r.add("Upsample", 7, upsample, HalfMode::kNative);  // scales attribute
  r.add("Upsample", 9, upsample, HalfMode::kNative);  // scales input
}

}  // namespace onnxdbg::reference
