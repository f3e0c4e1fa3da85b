// Reshape (ONNX Reshape-1/5/13/14): the same elements with a new shape. In the requested shape a 0
// copies the input's dimension (unless allowzero=1, opset 14) and one -1 is inferred.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status reshape(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  std::vector<int64_t> requested;
  if (ctx.opset() < 5) {
    requested = ctx.attr_ints("shape");
  } else {
    ODB_ASSIGN_OR_RETURN(requested, ints_of_input(ctx, 1, "shape"));
  }
  const bool allowzero = ctx.opset() >= 14 && ctx.attr_int("allowzero", 0) != 0;
  const std::string what = " cannot reshape a tensor of shape " + shape_to_string(x->shape()) +
                           " (" + std::to_string(x->numel()) + " elements) to " +
                           list_to_string(requested);
  Shape out(requested.size());
  int64_t infer = -1, known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t v = requested[i];
    if (v == -1) {
      if (infer >= 0) return model_error(ctx.describe() + what + ": more than one dimension is -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (v < -1)
      return model_error(ctx.describe() + what + ": dimension " + std::to_string(i) + " is " +
                         std::to_string(v));
    if (v == 0 && !allowzero) {
      if (static_cast<int64_t>(i) >= x->rank())
        return model_error(ctx.describe() + what + ": dimension " + std::to_string(i) +
                           " is 0 (copy the input's dimension) but the input has rank " +
                           std::to_string(x->rank()));
      out[i] = x->dim(static_cast<int64_t>(i));
    } else {
      out[i] = v;
      has_zero = has_zero || v == 0;
    }
    if (out[i] != 0 && known > std::numeric_limits<int64_t>::max() / out[i])
      return model_error(ctx.describe() + what + ": the element count overflows");
    known *= out[i];
  }
  if (allowzero && has_zero && infer >= 0)
    return model_error(ctx.describe() + what +
                       ": with allowzero=1 the shape cannot hold both 0 "
                       "and -1");
  if (infer >= 0) {
    if (known == 0)
      return model_error(ctx.describe() + what +
                         ": the -1 dimension cannot be inferred next to a 0 dimension");
    if (x->numel() % known != 0)
      return model_error(ctx.describe() + what + ": " + std::to_string(x->numel()) +
                         " elements are not a multiple of " + std::to_string(known));
    out[static_cast<size_t>(infer)] = x->numel() / known;
    known = x->numel();
  }
  if (known != x->numel())
    return model_error(ctx.describe() + what + " (shape " + shape_to_string(out) + ", " +
                       std::to_string(known) + " elements)");
  ODB_ASSIGN_OR_RETURN(Tensor y, reshaped_input(ctx, 0, *x, std::move(out)));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_reshape(KernelRegistry& r) {
  r.add("Reshape", 1, reshape, HalfMode::kNative);               // shape attribute
  r.add("Reshape", 5, reshape, HalfMode::kNative);               // shape input
  r.add("Reshape", 14, reshape, HalfMode::kNative).through(25);  // allowzero
}

}  // namespace onnxdbg::reference
