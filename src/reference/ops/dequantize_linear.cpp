// DequantizeLinear (ONNX DequantizeLinear-10/13/19/21/23/24/25/28): y = (x - x_zero_point) *
// x_scale as float32, per tensor or (from version 13) per slice along `axis` (default 1). x is
// uint8, int8 or int32 (int32 has no zero point). From version 19 the output has the scale's float
// type and x may be float8; version 21 adds blocked scales along `axis` (block_size),
// int16/uint16 and int4/uint4 x, 23 float4e2m1 x and attribute output_dtype, 24 float8e8m0
// scales, 25 int2/uint2 x, 28 the float6 types.
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
  if (dequantize_to_floats(*x, count, inner, s, z, y)) {
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  float* py = y.data<float>();
  for (int64_t i = 0; i < x->numel(); ++i) {
    const auto k = static_cast<size_t>(count > 1 ? (i / inner) % count : 0);
    py[i] = static_cast<float>(x->get_as_double(i) - z[k]) * static_cast<float>(s[k]);
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// DequantizeLinear-19 on: y has x_scale's type (or, from version 23, output_dtype's). x takes the
// types is_quant_type allows at kVersion, and int32; blocked scales from version 21, float8e8m0
// scales from 24 (with output_dtype naming y's type).
template <int kVersion>
Status dequantize_linear_v(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required_input(1));
  const Tensor* zp = ctx.input(2);
  if (!is_quant_type(x->dtype(), kVersion) && x->dtype() != DType::kInt32)
    return model_error(ctx.describe() + ": DequantizeLinear-" + std::to_string(kVersion) +
                       " takes x of type " + quant_type_names(kVersion) + " or int32, not " +
                       std::string(dtype_name(x->dtype())));
  if (zp && zp->dtype() != x->dtype())
    return model_error(ctx.describe() + ": x_zero_point is " +
                       std::string(dtype_name(zp->dtype())) + " but x is " +
                       std::string(dtype_name(x->dtype())));
  if (!is_floating(scale->dtype()) && !(kVersion >= 24 && scale->dtype() == DType::kFloat8E8M0))
    return model_error(ctx.describe() + ": x_scale must be a float tensor, got " +
                       std::string(dtype_name(scale->dtype())));
  DType out_type = scale->dtype();
  const int64_t od = kVersion >= 23 ? ctx.attr_int("output_dtype", 0) : 0;
  if (od != 0) {
    auto t = dtype_from_onnx(static_cast<int32_t>(od));
    if (!t || !(*t == DType::kFloat || *t == DType::kFloat16 || *t == DType::kBFloat16))
      return model_error(ctx.describe() + ": attribute output_dtype must be FLOAT, FLOAT16 or " +
                         "BFLOAT16 (1, 10 or 16), got " + std::to_string(od));
    out_type = *t;
  } else if (scale->dtype() == DType::kFloat8E8M0) {
    return model_error(ctx.describe() +
                       ": a float8e8m0 x_scale needs attribute output_dtype to name y's type");
  }
  QuantLayout q;
  if constexpr (kVersion >= 21) {
    ODB_ASSIGN_OR_RETURN(q, read_quant_layout(ctx, *x, *scale, zp, "x_scale", "x_zero_point"));
  } else {
    ODB_ASSIGN_OR_RETURN(q, read_per_axis_layout(ctx, *x, *scale, zp, "x_scale", "x_zero_point"));
  }
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, out_type, x->shape()));
  if (q.block == 0 && dequantize_to_floats(*x, q.count, q.inner, q.scale, q.zero, y)) {
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  for (int64_t i = 0; i < x->numel(); ++i) {
    const size_t k = q.at(i);
    // (x - zero) is exact in float32 for 16-bit and narrower x; the product rounds once, as in
    // float32.
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
  r.add("DequantizeLinear", 19, dequantize_linear_v<19>, HalfMode::kNative);
  r.add("DequantizeLinear", 21, dequantize_linear_v<21>, HalfMode::kNative);
  r.add("DequantizeLinear", 23, dequantize_linear_v<23>, HalfMode::kNative);
  r.add("DequantizeLinear", 24, dequantize_linear_v<24>, HalfMode::kNative);
  // DequantizeLinear-28 adds the float6 types only.
  r.add("DequantizeLinear", 25, dequantize_linear_v<25>, HalfMode::kNative).through(28);
}

}  // namespace onnxdbg::reference
