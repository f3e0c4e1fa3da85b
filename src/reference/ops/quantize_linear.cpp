// QuantizeLinear (ONNX QuantizeLinear-10/13/19/21/23/24/25/28): y = saturate(round_half_even(x /
// y_scale) + y_zero_point), per tensor or (from version 13) per slice along `axis` (default 1).
// The output type is the zero point's, uint8 when it is omitted. Version 19 adds the float8
// outputs (x / y_scale rounded to nearest even, out-of-range values by `saturate`), 21 blocked
// scales along `axis` (block_size), int16/uint16 and int4/uint4 outputs and attribute
// output_dtype, 23 float4e2m1 and `precision`, 24 float8e8m0 scales, 25 int2/uint2, 28 the float6
// types. Integer outputs clamp to their range (int4 to [-8, 7]); float outputs take
// x / y_scale + y_zero_point through the Cast rules.
#include "onnxdbg/narrow_types.h"
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
  if (quantize_floats_to_8bit(*x, count, inner, s, z, y)) {
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
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

// The output type of QuantizeLinear-`kVersion`: y_zero_point's, else (from 21) attribute
// output_dtype, else uint8. Errors: kModelError when output_dtype and y_zero_point disagree or
// the type is not one that version takes.
template <int kVersion>
Expected<DType> quantize_output_type(const KernelContext& ctx, const Tensor* zp) {
  const int64_t output_dtype = kVersion >= 21 ? ctx.attr_int("output_dtype", 0) : 0;
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
  if (!is_quant_type(out_type, kVersion))
    return model_error(ctx.describe() + ": QuantizeLinear-" + std::to_string(kVersion) +
                       " outputs " + quant_type_names(kVersion) + ", not " +
                       std::string(dtype_name(out_type)));
  return out_type;
}

// QuantizeLinear-19 and later. The division x / y_scale is in float32 for float32 x (as numpy
// divides), in float64 with precision = DOUBLE (QuantizeLinear-23 on) or for other x types;
// precision FLOAT16/BFLOAT16 divides the rounded operands and rounds the quotient to that type.
template <int kVersion>
Status quantize_linear_v(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required_input(1));
  const Tensor* zp = ctx.input(2);
  ODB_ASSIGN_OR_RETURN(const DType out_type, quantize_output_type<kVersion>(ctx, zp));
  const bool scale_ok = is_floating(scale->dtype()) || scale->dtype() == DType::kInt32 ||
                        (kVersion >= 24 && scale->dtype() == DType::kFloat8E8M0);
  if (!scale_ok)
    return model_error(ctx.describe() + ": y_scale of type " +
                       std::string(dtype_name(scale->dtype())) + " is not allowed");
  DType precision = DType::kUndefined;
  if constexpr (kVersion >= 23) {
    const int64_t p = ctx.attr_int("precision", 0);
    if (p != 0) {
      auto t = dtype_from_onnx(static_cast<int32_t>(p));
      if (!t || !is_floating(*t))
        return unsupported(ctx.describe() + ": attribute precision " + std::to_string(p) +
                           " is not implemented (only float16, bfloat16, float32 and float64)");
      precision = *t;
    }
  }
  NarrowCast narrow;
  narrow.saturate = ctx.attr_int("saturate", 1) != 0;
  QuantLayout q;
  if constexpr (kVersion >= 21) {
    ODB_ASSIGN_OR_RETURN(q, read_quant_layout(ctx, *x, *scale, zp, "y_scale", "y_zero_point"));
  } else {
    ODB_ASSIGN_OR_RETURN(q, read_per_axis_layout(ctx, *x, *scale, zp, "y_scale", "y_zero_point"));
  }
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, out_type, x->shape()));
  const bool in_float =
      precision == DType::kFloat || (precision == DType::kUndefined && x->dtype() == DType::kFloat);
  const bool narrow_float = is_narrow_float(out_type);
  const bool float8 = out_type == DType::kFloat8E4M3FN || out_type == DType::kFloat8E4M3FNUZ ||
                      out_type == DType::kFloat8E5M2 || out_type == DType::kFloat8E5M2FNUZ;
  if (in_float && q.block == 0 &&
      quantize_floats_to_8bit(*x, q.count, q.inner, q.scale, q.zero, y)) {
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  for (int64_t i = 0; i < x->numel(); ++i) {
    const size_t k = q.at(i);
    double v = 0;
    if (in_float) {
      v = static_cast<double>(static_cast<float>(x->get_as_double(i)) /
                              static_cast<float>(q.scale[k]));
    } else if (precision == DType::kFloat16) {
      // Both operands have 11 significant bits: the double quotient rounds to float16 exactly
      // as a float16 division would.
      const double a = static_cast<float>(Float16(static_cast<float>(x->get_as_double(i))));
      const double b = static_cast<float>(Float16(static_cast<float>(q.scale[k])));
      v = static_cast<float>(Float16(static_cast<float>(a / b)));
    } else if (precision == DType::kBFloat16) {
      const double a = static_cast<float>(BFloat16(static_cast<float>(x->get_as_double(i))));
      const double b = static_cast<float>(BFloat16(static_cast<float>(q.scale[k])));
      v = static_cast<float>(BFloat16(static_cast<float>(a / b)));
    } else {
      v = x->get_as_double(i) / q.scale[k];
    }
    if (narrow_float) {
      // -0 + 0 is +0: ONNX's reference adds the zero point for float4/float6 (x = -0 gives +0)
      // but leaves it out for float8 (-0 stays -0), where it must be 0.
      if (zp && (q.zero[k] != 0 || !float8)) v += q.zero[k];
      y.raw()[i] = std::byte{narrow_from_double(out_type, v, narrow)};
    } else {
      y.set_from_double(i, saturate_round(std::nearbyint(v) + q.zero[k], out_type));
    }
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_quantize_linear(KernelRegistry& r) {
  r.add("QuantizeLinear", 10, quantize_linear);
  r.add("QuantizeLinear", 13, quantize_linear);  // per-axis scale and zero point
  r.add("QuantizeLinear", 19, quantize_linear_v<19>);
  r.add("QuantizeLinear", 21, quantize_linear_v<21>);
  r.add("QuantizeLinear", 23, quantize_linear_v<23>);
  r.add("QuantizeLinear", 24, quantize_linear_v<24>);
  // QuantizeLinear-28 adds the float6 types only.
  r.add("QuantizeLinear", 25, quantize_linear_v<25>).through(28);
}

}  // namespace onnxdbg::reference
