// Helpers shared by the quantization kernels (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, QLinearMatMul, QLinearConv, ConvInteger): per-tensor or per-axis
// scale/zero-point reading, round-half-to-even with saturation to the integer type, the types
// each QuantizeLinear/DequantizeLinear version takes; the exact integer convolution and matrix
// product come from integer_gemm.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "reference/ops/data_movement.h"
#include "reference/ops/integer_gemm.h"

namespace onnxdbg::reference {

/// Rounds half to even (numpy.rint, ONNX's QuantizeLinear rule) and saturates to the range of
/// `t` (uint8 [0, 255], int8 [-128, 127], int32, uint4 [0, 15], int4 [-8, 7], uint2 [0, 3],
/// int2 [-2, 1], ...).
inline double saturate_round(double v, DType t) {
  double lo = 0, hi = 0;
  switch (t) {
    case DType::kUint4:
      lo = 0;
      hi = 15;
      break;
    case DType::kInt4:
      lo = -8;
      hi = 7;
      break;
    case DType::kUint2:
      lo = 0;
      hi = 3;
      break;
    case DType::kInt2:
      lo = -2;
      hi = 1;
      break;
    case DType::kUint8:
      lo = 0;
      hi = 255;
      break;
    case DType::kInt8:
      lo = -128;
      hi = 127;
      break;
    case DType::kUint16:
      lo = 0;
      hi = 65535;
      break;
    case DType::kInt16:
      lo = -32768;
      hi = 32767;
      break;
    case DType::kInt32:
      lo = std::numeric_limits<int32_t>::min();
      hi = std::numeric_limits<int32_t>::max();
      break;
    default:
      lo = -1e300;
      hi = 1e300;
      break;
  }
  if (std::isnan(v)) return 0;
  return std::clamp(std::nearbyint(v), lo, hi);
}

/// std::nearbyint(v) under the default rounding mode (round half to even), without its library
/// call, so that loops over it vectorise: adding and subtracting 1.5 * 2^52 leaves the nearest
/// integer, ties to even, as the FPU rounds the sum (1.5 * 2^52 is even, so the tie goes the same
/// way); a double of magnitude 2^52 or more is an integer already. NaN stays NaN.
inline double round_half_even(double v) {
  return std::fabs(v) < 0x1p52 ? (v + 0x1.8p52) - 0x1.8p52 : v;
}

/// The same for float (1.5 * 2^23): what std::nearbyint gives for a float v.
inline float round_half_even(float v) {
  return std::fabs(v) < 0x1p23f ? (v + 0x1.8p23f) - 0x1.8p23f : v;
}

/// saturate_round(std::nearbyint(v) + zero, t) for t the 8-bit type Out (uint8_t or int8_t): v
/// rounded half to even, shifted by the integer `zero` and saturated to Out's range; NaN gives 0.
/// Written without branches so that loops over it vectorise.
template <class Out>
Out requantize(double v, double zero) {
  const double lo = std::numeric_limits<Out>::min(), hi = std::numeric_limits<Out>::max();
  double r = round_half_even(v) + zero;
  r = r < lo ? lo : r;
  r = r > hi ? hi : r;
  r = std::isnan(r) ? 0.0 : r;
  return static_cast<Out>(static_cast<int32_t>(r));
}

/// Values of a scale or zero-point input `t` spread over `count` slices: a scalar (or 1-element
/// tensor) repeats, a 1-D tensor of `count` values is per slice. A missing `t` gives `def`.
/// Errors: kModelError naming the node and `what` for other shapes.
inline Expected<std::vector<double>> per_slice_values(const KernelContext& ctx, const Tensor* t,
                                                      int64_t count, const std::string& what,
                                                      double def = 0) {
  std::vector<double> v(static_cast<size_t>(count), def);
  if (!t || t->numel() == 0) return v;
  if (t->numel() != 1 && !(t->rank() == 1 && t->numel() == count))
    return model_error(ctx.describe() + ": " + what + " must be a scalar or a 1-D tensor of " +
                       std::to_string(count) + " values, got shape " + shape_to_string(t->shape()));
  for (int64_t i = 0; i < count; ++i)
    v[static_cast<size_t>(i)] = t->get_as_double(t->numel() == 1 ? 0 : i);
  return v;
}

/// How QuantizeLinear/DequantizeLinear-21 (and later) spread scale and zero point over x:
/// per tensor (a scalar or one value), per axis (a 1-D tensor of x.dim(axis) values) or blocked
/// (block_size > 0: the scale has x's rank and shape except ceil(x.dim(axis) / block_size) along
/// `axis`; element i of x uses the value of its block).
struct QuantLayout {
  std::vector<double> scale, zero;  ///< one value per scale element
  int64_t len = 1, inner = 1;       ///< x.dim(axis) and the elements after axis
  int64_t block = 0;                ///< block_size, 0 unless blocked
  int64_t count = 1;                ///< per-axis slices (1 per tensor)
  size_t at(int64_t i) const {
    if (block > 0) {
      const int64_t blocks = len / block + (len % block != 0);
      const int64_t o = i / (len * inner), a = (i / inner) % len, in = i % inner;
      return static_cast<size_t>((o * blocks + a / block) * inner + in);
    }
    return static_cast<size_t>(count > 1 ? (i / inner) % count : 0);
  }
};

/// Per-tensor or per-axis layout of QuantizeLinear/DequantizeLinear-10 to 19 (no blocking): a
/// scalar or one-value scale applies to all of x, a 1-D scale of x.dim(axis) values (attribute
/// axis, default 1) per slice. Errors: kModelError naming the node for other scale or zero point
/// shapes, or a per-axis scale on a scalar x.
inline Expected<QuantLayout> read_per_axis_layout(const KernelContext& ctx, const Tensor& x,
                                                  const Tensor& scale, const Tensor* zp,
                                                  const std::string& scale_name,
                                                  const std::string& zero_name) {
  QuantLayout q;
  if (scale.numel() > 1 || scale.rank() == 1) {
    if (x.rank() == 0)
      return model_error(ctx.describe() + ": a per-axis scale needs a non-scalar x");
    ODB_ASSIGN_OR_RETURN(const int64_t axis,
                         normalize_axis_of(ctx, ctx.attr_int("axis", 1), x.rank()));
    q.count = x.dim(axis);
    q.inner = dims_product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  }
  ODB_ASSIGN_OR_RETURN(q.scale, per_slice_values(ctx, &scale, q.count, scale_name, 1.0));
  ODB_ASSIGN_OR_RETURN(q.zero, per_slice_values(ctx, zp, q.count, zero_name));
  return q;
}

/// Reads scale (`scale_name`) and optional zero point (`zero_name`) for x with attributes axis
/// (default 1) and block_size (default 0). Errors: kModelError naming the node for a negative
/// block_size, a scale whose shape fits none of the three layouts, or a zero point whose shape is
/// not the scale's (a one-value scale and zero point may differ in rank).
inline Expected<QuantLayout> read_quant_layout(const KernelContext& ctx, const Tensor& x,
                                               const Tensor& scale, const Tensor* zp,
                                               const std::string& scale_name,
                                               const std::string& zero_name) {
  QuantLayout q;
  const int64_t block = ctx.attr_int("block_size", 0);
  if (block < 0)
    return model_error(ctx.describe() + ": attribute block_size must be >= 0, got " +
                       std::to_string(block));
  // One value each is per tensor, whatever the shapes ([] and [1]), as in ONNX's reference.
  if (zp && zp->numel() > 0 && zp->shape() != scale.shape() &&
      !(zp->numel() == 1 && scale.numel() == 1))
    return model_error(ctx.describe() + ": " + zero_name + " has shape " +
                       shape_to_string(zp->shape()) + " but " + scale_name + " has shape " +
                       shape_to_string(scale.shape()));
  if (block == 0) {
    int64_t axis = 0;
    if (scale.numel() > 1 || scale.rank() == 1) {
      if (x.rank() == 0)
        return model_error(ctx.describe() + ": a per-axis scale needs a non-scalar x");
      ODB_ASSIGN_OR_RETURN(axis, normalize_axis_of(ctx, ctx.attr_int("axis", 1), x.rank()));
      q.count = x.dim(axis);
      q.inner = dims_product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
    }
    ODB_ASSIGN_OR_RETURN(q.scale, per_slice_values(ctx, &scale, q.count, scale_name, 1.0));
    ODB_ASSIGN_OR_RETURN(q.zero, per_slice_values(ctx, zp, q.count, zero_name));
    return q;
  }
  if (x.rank() == 0 || scale.rank() != x.rank())
    return model_error(ctx.describe() + ": blocked quantization (block_size " +
                       std::to_string(block) + ") needs " + scale_name + " of x's rank, got " +
                       shape_to_string(scale.shape()) + " for x of shape " +
                       shape_to_string(x.shape()));
  ODB_ASSIGN_OR_RETURN(const int64_t axis,
                       normalize_axis_of(ctx, ctx.attr_int("axis", 1), x.rank()));
  Shape expected = x.shape();
  expected[static_cast<size_t>(axis)] = x.dim(axis) / block + (x.dim(axis) % block != 0);
  if (scale.shape() != expected)
    return model_error(ctx.describe() + ": with block_size " + std::to_string(block) +
                       " along axis " + std::to_string(axis) + ", " + scale_name +
                       " must have shape " + shape_to_string(expected) + ", got " +
                       shape_to_string(scale.shape()));
  q.block = block;
  q.len = x.dim(axis);
  q.inner = dims_product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  q.scale.resize(static_cast<size_t>(scale.numel()));
  q.zero.assign(static_cast<size_t>(scale.numel()), 0.0);
  for (int64_t i = 0; i < scale.numel(); ++i) {
    q.scale[static_cast<size_t>(i)] = scale.get_as_double(i);
    if (zp && zp->numel() > 0) q.zero[static_cast<size_t>(i)] = zp->get_as_double(i);
  }
  return q;
}

/// The integer types QuantizeLinear/DequantizeLinear-21 and later take, int4/uint4 and
/// int2/uint2 aside.
inline bool is_quant_int(DType t) {
  return t == DType::kUint8 || t == DType::kInt8 || t == DType::kUint16 || t == DType::kInt16;
}

/// True when `t` is a quantized type of QuantizeLinear's y / DequantizeLinear's x at schema
/// version `version` (10 or later; int32, which only DequantizeLinear takes, is not included):
/// uint8/int8 from 10, the four float8 types from 19, uint16/int16 and uint4/int4 from 21,
/// float4e2m1 from 23, uint2/int2 from 25, float6e2m3/float6e3m2 from 28.
inline bool is_quant_type(DType t, int version) {
  switch (t) {
    case DType::kUint8:
    case DType::kInt8:
      return true;
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
      return version >= 19;
    case DType::kUint16:
    case DType::kInt16:
    case DType::kUint4:
    case DType::kInt4:
      return version >= 21;
    case DType::kFloat4E2M1:
      return version >= 23;
    case DType::kUint2:
    case DType::kInt2:
      return version >= 25;
    case DType::kFloat6E2M3:
    case DType::kFloat6E3M2:
      return version >= 28;
    default:
      return false;
  }
}

/// The names of the types is_quant_type accepts at `version`, for error messages.
inline std::string quant_type_names(int version) {
  std::string names;
  for (int32_t code = 1; code <= kMaxDType; ++code) {
    const auto t = static_cast<DType>(code);
    if (!is_quant_type(t, version)) continue;
    if (!names.empty()) names += ", ";
    names += dtype_name(t);
  }
  return names;
}

/// True for the 8-bit integer types the quantized kernels take.
inline bool is_8bit(DType t) { return t == DType::kUint8 || t == DType::kInt8; }

/// Calls f(begin, end, k) over the n elements of x in runs [begin, end) that share scale and
/// zero-point slice k: one run for a per-tensor scale (count 1), else runs of `inner` elements,
/// run r using slice r % count (QuantLayout::at without blocks).
template <class F>
void for_each_slice_run(int64_t n, int64_t count, int64_t inner, F&& f) {
  if (count <= 1) {
    f(int64_t{0}, n, size_t{0});
    return;
  }
  for (int64_t b = 0, r = 0; b < n; b += inner, ++r)
    f(b, std::min(n, b + inner), static_cast<size_t>(r % count));
}

/// QuantizeLinear's loop for float32 x and uint8/int8 y, typed so that it vectorises: y[i] =
/// saturate(round_half_even(x[i] / scale[k] in float32) + zero[k]) (the same values as the
/// per-element path: requantize). scale and zero hold a value per slice (for_each_slice_run).
/// Returns false, doing nothing, for other types.
inline bool quantize_floats_to_8bit(const Tensor& x, int64_t count, int64_t inner,
                                    const std::vector<double>& scale,
                                    const std::vector<double>& zero, Tensor& y) {
  if (x.dtype() != DType::kFloat || !is_8bit(y.dtype())) return false;
  const float* px = x.data<float>();
  const auto run = [&](auto* py) {
    using Out = std::remove_pointer_t<decltype(py)>;
    for_each_slice_run(x.numel(), count, inner, [&](int64_t b, int64_t e, size_t k) {
      const auto s = static_cast<float>(scale[k]);
      const double z = zero.empty() ? 0.0 : zero[k];
      for (int64_t i = b; i < e; ++i) py[i] = requantize<Out>(static_cast<double>(px[i] / s), z);
    });
  };
  if (y.dtype() == DType::kUint8)
    run(y.data<uint8_t>());
  else
    run(y.data<int8_t>());
  return true;
}

/// DequantizeLinear's loop for uint8/int8/int32 x and float32 y, typed so that it vectorises:
/// y[i] = float(x[i] - zero[k]) * float(scale[k]) (x - zero taken in double, as the per-element
/// path does). Returns false, doing nothing, for other types.
inline bool dequantize_to_floats(const Tensor& x, int64_t count, int64_t inner,
                                 const std::vector<double>& scale, const std::vector<double>& zero,
                                 Tensor& y) {
  if (y.dtype() != DType::kFloat || !(is_8bit(x.dtype()) || x.dtype() == DType::kInt32))
    return false;
  float* py = y.data<float>();
  const auto run = [&](const auto* px) {
    for_each_slice_run(x.numel(), count, inner, [&](int64_t b, int64_t e, size_t k) {
      const auto s = static_cast<float>(scale[k]);
      const double z = zero.empty() ? 0.0 : zero[k];
      for (int64_t i = b; i < e; ++i)
        py[i] = static_cast<float>(static_cast<double>(px[i]) - z) * s;
    });
  };
  if (x.dtype() == DType::kUint8)
    run(x.data<uint8_t>());
  else if (x.dtype() == DType::kInt8)
    run(x.data<int8_t>());
  else
    run(x.data<int32_t>());
  return true;
}

}  // namespace onnxdbg::reference
