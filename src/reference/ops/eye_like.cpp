// EyeLike (ONNX EyeLike-9): a 2-D tensor shaped like the input with ones on diagonal k and zeros
// elsewhere; element type from `dtype` or else the input's.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status eye_like(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->rank() != 2)
    return model_error(ctx.describe() + " needs a 2-D input, got shape " +
                       shape_to_string(x->shape()));
  DType dt = x->dtype();
  if (ctx.has_attr("dtype")) {
    auto d = dtype_from_onnx(static_cast<int32_t>(ctx.attr_int("dtype", 0)));
    if (!d) return model_error(ctx.describe() + ": " + d.status().message());
    dt = *d;
  }
  if (dt == DType::kString || dt == DType::kComplex64 || dt == DType::kComplex128 ||
      dt == DType::kUndefined)
    return unsupported(ctx.describe() + " does not support element type " +
                       std::string(dtype_name(dt)));
  const int64_t k = ctx.attr_int("k", 0);
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, dt, x->shape()));
  for (int64_t r = 0; r < x->dim(0); ++r) {
    const int64_t c = r + k;
    if (c >= 0 && c < x->dim(1)) out.set_from_double(r * x->dim(1) + c, 1.0);
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_eye_like(KernelRegistry& r) {
  r.add("EyeLike", 9, eye_like, HalfMode::kNative).through(22);
}

}  // namespace onnxdbg::reference
