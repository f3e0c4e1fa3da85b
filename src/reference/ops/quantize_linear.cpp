// QuantizeLinear (ONNX QuantizeLinear-10/13/19): y = saturate(round_half_even(x / y_scale) +
// y_zero_point), per tensor or (from version 13) per slice along `axis` (default 1). The output
// type is the zero point's (uint8 or int8), uint8 when it is omitted. From version 21 (and 23, 24,
// 25, whose additions are types not implemented here and `precision`) also blocked along `axis`
// (block_size), int16/uint16 outputs, and attribute output_dtype when there is no zero point.
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

// The division x / y_scale in float32 for float32 x (as above) or in float64 with
// precision = DOUBLE (QuantizeLinear-23 on); other precisions are refused.
Status quantize_linear_21(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required_input(1));
  const Tensor* zp = ctx.input(2);
  const int64_t output_dtype = ctx.attr_int("output_dtype", 0);
  DType out_type = DType::kUint8;
  if (zp) {
    out_type = zp->dtype();
    if (output_dtype != 0 && output_dtype != static_cast<int64_t>(out_type))
      return model_error(ctx.describe() + ": attribute output_dtype " +
                         std::to_string(output_dtype) + " differs from y_zero_point's type " +
                         std::string(dtype_name(out_type)));
  } else if (output_dtype != 0) {
    auto t = dtype_from_onnx(static_cast<int32_t>(output_dtype));
    if (!t)
      return std::move(t).status().with_context("reading attribute output_dtype of " +
                                                ctx.describe());
    out_type = *t;
  }
  if (!is_quant_int(out_type))
    return unsupported(ctx.describe() + ": the output type must be uint8, int8, uint16 or int16, " +
                       "got " + std::string(dtype_name(out_type)));
  const int64_t precision = ctx.attr_int("precision", 0);
  if (precision != 0 && precision != static_cast<int64_t>(DType::kFloat) &&
      precision != static_cast<int64_t>(DType::kDouble))
    return unsupported(ctx.describe() + ": attribute precision " + std::to_string(precision) +
                       " is not implemented (only float32 and float64)");
  ODB_ASSIGN_OR_RETURN(QuantLayout q,
                       read_quant_layout(ctx, *x, *scale, zp, "y_scale", "y_zero_point"));
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, out_type, x->shape()));
  const bool in_float =
      x->dtype() == DType::kFloat && precision != static_cast<int64_t>(DType::kDouble);
  for (int64_t i = 0; i < x->numel(); ++i) {
    const size_t k = q.at(i);
    const double v = in_float
                         ? static_cast<double>(x->data<float>()[i] / static_cast<float>(q.scale[k]))
                         : x->get_as_double(i) / q.scale[k];
    y.set_from_double(i, saturate_round(std::nearbyint(v) + q.zero[k], out_type));
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_quantize_linear(KernelRegistry& r) {
  r.add("QuantizeLinear", 10, quantize_linear);
  r.add("QuantizeLinear", 13, quantize_linear);  // per-axis scale and zero point
  r.add("QuantizeLinear", 19, quantize_linear);  // adds float8 types (not implemented), saturate
  for (int v : {21, 23, 24, 25}) r.add("QuantizeLinear", v, quantize_linear_21);
}

}  // namespace onnxdbg::reference
