// ConvInteger (ONNX ConvInteger-10): int32 convolution of (x - x_zero_point) with
// (w - w_zero_point) for uint8/int8 operands; w's zero point per tensor or per output channel.
// Attributes as Conv. The exact sums come from integer_conv (im2col + float or double GEMM).
#include "reference/ops/quant_common.h"

namespace onnxdbg::reference {
namespace {

Status conv_integer(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* w, ctx.required_input(1));
  if (!is_8bit(x->dtype()) || !is_8bit(w->dtype()))
    return unsupported(ctx.describe() + ": x and w must be uint8 or int8, got " +
                       std::string(dtype_name(x->dtype())) + " and " +
                       std::string(dtype_name(w->dtype())));
  if (w->rank() < 1) return model_error(ctx.describe() + ": w must have rank >= 3");
  ODB_ASSIGN_OR_RETURN(auto xz, per_slice_values(ctx, ctx.input(2), 1, "x_zero_point"));
  ODB_ASSIGN_OR_RETURN(auto wz, per_slice_values(ctx, ctx.input(3), w->dim(0), "w_zero_point"));
  Shape out_shape;
  ODB_ASSIGN_OR_RETURN(IntegerSums acc, integer_conv(ctx, *x, *w, xz[0], wz, out_shape));
  ODB_ASSIGN_OR_RETURN(Tensor y, std::move(acc).into_int32_tensor(ctx, out_shape));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_conv_integer(KernelRegistry& r) {
  r.add("ConvInteger", 10, conv_integer, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
