// QuantizeLinear (ONNX QuantizeLinear-10/13): y = saturate(round_half_even(x / y_scale) +
// y_zero_point), per tensor or (from version 13) per slice along `axis` (default 1). The output
// type is the zero point's (uint8 or int8), uint8 when it is omitted.
#include "reference/ops/quant_common.h"

namespace onnxdbg::reference {
namespace {

Status quantize_linear(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required_input(1));
  const Tensor* zp = ctx.input(2);
  const DType out_type = zp ? zp->dtype() : DType::kUint8;
  if (!is_8bit(out_type))
    return unsupported(ctx.describe() + ": y_zero_point must be uint8 or int8, got " +
                       std::string(dtype_name(out_type)));
  int64_t axis = 0, count = 1;
  if (scale->numel() > 1 || scale->rank() == 1) {
    if (x->rank() == 0)
      return model_error(ctx.describe() + ": a per-axis scale needs a non-scalar x");
    ODB_ASSIGN_OR_RETURN(axis, normalize_axis_of(ctx, ctx.attr_int("axis", 1), x->rank()));
    count = x->dim(axis);
  }
  ODB_ASSIGN_OR_RETURN(auto s, per_slice_values(ctx, scale, count, "y_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto z, per_slice_values(ctx, zp, count, "y_zero_point"));
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, out_type, x->shape()));
  const int64_t inner =
      count > 1 ? dims_product(x->shape(), static_cast<size_t>(axis) + 1, x->shape().size()) : 1;
  for (int64_t i = 0; i < x->numel(); ++i) {
    const auto k = static_cast<size_t>(count > 1 ? (i / inner) % count : 0);
    // float32 x is divided in float32, as numpy does, so that ties round the same way.
    const double q = x->dtype() == DType::kFloat
                         ? static_cast<double>(x->data<float>()[i] / static_cast<float>(s[k]))
                         : x->get_as_double(i) / s[k];
    y.set_from_double(i, saturate_round(std::nearbyint(q) + z[k], out_type));
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_quantize_linear(KernelRegistry& r) {
  r.add("QuantizeLinear", 10, quantize_linear);
  // QuantizeLinear-19 added float16/bfloat16 inputs and float8 outputs with `saturate` (float8
  // only, refused); 21 added blocked quantization and output_dtype, which this kernel lacks.
  r.add("QuantizeLinear", 13, quantize_linear).through(19);  // per-axis scale and zero point
}

}  // namespace onnxdbg::reference
