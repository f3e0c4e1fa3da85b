// DequantizeLinear (ONNX DequantizeLinear-10/13): y = (x - x_zero_point) * x_scale as float32,
// per tensor or (from version 13) per slice along `axis` (default 1). x is uint8, int8 or int32
// (int32 has no zero point).
#include "reference/ops/quant_common.h"

namespace onnxdbg::reference {
namespace {

Status dequantize_linear(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required_input(1));
  const Tensor* zp = ctx.input(2);
  if (!is_8bit(x->dtype()) && x->dtype() != DType::kInt32)
    return unsupported(ctx.describe() + ": x must be uint8, int8 or int32, got " +
                       std::string(dtype_name(x->dtype())));
  if (zp && zp->dtype() != x->dtype())
    return model_error(ctx.describe() + ": x_zero_point is " +
                       std::string(dtype_name(zp->dtype())) + " but x is " +
                       std::string(dtype_name(x->dtype())));
  int64_t axis = 0, count = 1;
  if (scale->numel() > 1 || scale->rank() == 1) {
    if (x->rank() == 0)
      return model_error(ctx.describe() + ": a per-axis scale needs a non-scalar x");
    ODB_ASSIGN_OR_RETURN(axis, normalize_axis_of(ctx, ctx.attr_int("axis", 1), x->rank()));
    count = x->dim(axis);
  }
  ODB_ASSIGN_OR_RETURN(auto s, per_slice_values(ctx, scale, count, "x_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto z, per_slice_values(ctx, zp, count, "x_zero_point"));
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, DType::kFloat, x->shape()));
  const int64_t inner =
      count > 1 ? dims_product(x->shape(), static_cast<size_t>(axis) + 1, x->shape().size()) : 1;
  float* py = y.data<float>();
  for (int64_t i = 0; i < x->numel(); ++i) {
    const auto k = static_cast<size_t>(count > 1 ? (i / inner) % count : 0);
    py[i] = static_cast<float>(x->get_as_double(i) - z[k]) * static_cast<float>(s[k]);
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_dequantize_linear(KernelRegistry& r) {
  r.add("DequantizeLinear", 10, dequantize_linear, HalfMode::kNative);
  // DequantizeLinear-19 added float8 inputs (refused) and float16/bfloat16 scales; 21 added
  // blocked quantization, which this kernel lacks.
  r.add("DequantizeLinear", 13, dequantize_linear, HalfMode::kNative).through(19);
}

}  // namespace onnxdbg::reference
