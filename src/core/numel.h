// Element counts of dims a model declares (TensorProto dims, value_info shapes), which hostile
// models make large enough to wrap int64 when multiplied.
#pragma once

#include <cstdint>
#include <limits>

namespace onnxdbg {

/// The product of `dims` (any range of integers), saturating at INT64_MAX instead of overflowing;
/// 0 when a dim is 0, -1 when a dim is negative (the dims describe no tensor). For comparisons
/// ("is this initializer large?"), never for sizing an allocation: shape_numel (onnxdbg/tensor.h)
/// refuses such shapes with an error instead.
template <class Dims>
int64_t saturating_numel(const Dims& dims) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t n = 1;
  bool saturated = false;
  for (const auto dim : dims) {
    const auto d = static_cast<int64_t>(dim);
    if (d < 0) return -1;
    if (d == 0) return 0;
    if (saturated || n > kMax / d)
      saturated = true;
    else
      n *= d;
  }
  return saturated ? kMax : n;
}

/// a * b for non-negative a and b, saturating at INT64_MAX (byte counts of declared tensors).
inline int64_t saturating_mul(int64_t a, int64_t b) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (a <= 0 || b <= 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

}  // namespace onnxdbg
