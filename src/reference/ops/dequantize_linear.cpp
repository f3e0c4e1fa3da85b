// DequantizeLinear (ONNX DequantizeLinear-10/13): y = (x - x_zero_point) * x_scale as float32,
// per tensor or (from version 13) per slice along `axis` (default 1). x is uint8, int8 or int32
// (int32 has no zero point). From version 19 the output has the scale's float type. From version 21
// (and 23, 24, 25, whose additions are types not implemented here and output_dtype) also blocked
// along `axis` (block_size) and int16/uint16 x.
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

// DequantizeLinear-19 on: y has x_scale's type (or output_dtype's, from version 23).
template <bool kBlocked>
Status dequantize_linear_19(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required_input(1));
  const Tensor* zp = ctx.input(2);
  if (!(kBlocked ? is_quant_int(x->dtype()) : is_8bit(x->dtype())) && x->dtype() != DType::kInt32)
    return unsupported(ctx.describe() + ": x must be uint8, int8, " +
                       (kBlocked ? "uint16, int16 " : "") + "or int32, got " +
                       std::string(dtype_name(x->dtype())));
  if (zp && zp->dtype() != x->dtype())
    return model_error(ctx.describe() + ": x_zero_point is " +
                       std::string(dtype_name(zp->dtype())) + " but x is " +
                       std::string(dtype_name(x->dtype())));
  if (!is_floating(scale->dtype()))
    return model_error(ctx.describe() + ": x_scale must be a float tensor, got " +
                       std::string(dtype_name(scale->dtype())));
  DType out_type = scale->dtype();
  if (const int64_t od = ctx.attr_int("output_dtype", 0);
      od != 0 && od != static_cast<int64_t>(out_type))
    return model_error(ctx.describe() + ": attribute output_dtype " + std::to_string(od) +
                       " differs from x_scale's type " + std::string(dtype_name(out_type)));
  QuantLayout q;
  if constexpr (kBlocked) {
    ODB_ASSIGN_OR_RETURN(q, read_quant_layout(ctx, *x, *scale, zp, "x_scale", "x_zero_point"));
  } else {
    if (scale->numel() > 1 || scale->rank() == 1) {
      if (x->rank() == 0)
        return model_error(ctx.describe() + ": a per-axis scale needs a non-scalar x");
      ODB_ASSIGN_OR_RETURN(const int64_t axis,
                           normalize_axis_of(ctx, ctx.attr_int("axis", 1), x->rank()));
      q.count = x->dim(axis);
      q.inner = dims_product(x->shape(), static_cast<size_t>(axis) + 1, x->shape().size());
    }
    ODB_ASSIGN_OR_RETURN(q.scale, per_slice_values(ctx, scale, q.count, "x_scale", 1.0));
    ODB_ASSIGN_OR_RETURN(q.zero, per_slice_values(ctx, zp, q.count, "x_zero_point"));
  }
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, out_type, x->shape()));
  for (int64_t i = 0; i < x->numel(); ++i) {
    const size_t k = q.at(i);
    // (x - zero) is exact in float32 for 16-bit x; the product rounds once, as in float32.
    const float v =
        static_cast<float>(x->get_as_double(i) - q.zero[k]) * static_cast<float>(q.scale[k]);
    y.set_from_double(i, out_type == DType::kDouble ? (x->get_as_double(i) - q.zero[k]) * q.scale[k]
                                                    : static_cast<double>(v));
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_dequantize_linear(KernelRegistry& r) {
  r.add("DequantizeLinear", 10, dequantize_linear, HalfMode::kNative);
  r.add("DequantizeLinear", 13, dequantize_linear, HalfMode::kNative);
  r.add("DequantizeLinear", 19, dequantize_linear_19<false>, HalfMode::kNative);
  for (int v : {21, 23, 24, 25})
    r.add("DequantizeLinear", v, dequantize_linear_19<true>, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
