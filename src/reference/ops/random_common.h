// Random numbers for the generator ops (RandomUniform, RandomNormal, their *Like forms, Bernoulli,
// Multinomial) drawn like ONNX's reference, which uses numpy's legacy RandomState: MT19937 seeded
// with int(seed) (init_genrand), doubles from two 32-bit words (53 bits), normals by the polar
// Box-Muller method with the second value cached. Without a seed the spec asks for an
// implementation-chosen one; we derive it from the run's seed and the node
// (KernelContext::random_seed), so runs repeat bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {

class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed) : gen_(seed) {}
  /// The state for a node: its `seed` attribute (a float, truncated like Python's int()) or,
  /// without one, the seed the run gives the node (KernelContext::random_seed: the run-level
  /// InterpreterOptions::random_seed, the node's name or index, and its draw count).
  static NumpyRandomState for_node(const KernelContext& ctx) {
    if (ctx.has_attr("seed") && !std::isnan(ctx.attr_float("seed", 0)))
      return NumpyRandomState(
          static_cast<uint32_t>(static_cast<int64_t>(ctx.attr_float("seed", 0))));
    return NumpyRandomState(ctx.random_seed());
  }
  /// numpy random_sample(): uniform in [0, 1).
  double uniform() {
    const uint32_t a = gen_() >> 5, b = gen_() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }
  /// numpy's legacy standard normal (randn).
  double normal() {
    if (has_gauss_) {
      has_gauss_ = false;
      return gauss_;
    }
    double x1 = 0, x2 = 0, r2 = 0;
    do {
      x1 = 2.0 * uniform() - 1.0;
      x2 = 2.0 * uniform() - 1.0;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = std::sqrt(-2.0 * std::log(r2) / r2);
    gauss_ = f * x1;
    has_gauss_ = true;
    return f * x2;
  }
  /// numpy binomial(1, p): no draw for p == 0; otherwise one uniform U, compared the way numpy's
  /// inversion algorithm does for n = 1 (1 when U > 1 - p for p <= 0.5, when U <= p above).
  double bernoulli(double p) {
    if (p <= 0) return 0;
    const double u = uniform();
    if (p <= 0.5) return u > 1.0 - p ? 1 : 0;
    return u > p ? 0 : 1;
  }

 private:
  std::mt19937 gen_;
  bool has_gauss_ = false;
  double gauss_ = 0;
};

/// The `dtype` attribute of a generator op: float16, float32 or float64 (default `def`).
inline Expected<DType> random_dtype(const KernelContext& ctx, DType def) {
  if (!ctx.has_attr("dtype")) return def;
  auto t = dtype_from_onnx(static_cast<int32_t>(ctx.attr_int("dtype", 1)));
  if (!t || !is_floating(*t))
    return model_error(ctx.describe() + ": dtype " + std::to_string(ctx.attr_int("dtype", 1)) +
                       " is not a floating-point type");
  return *t;
}

/// Fills a new tensor of `shape` and `dtype` with low + (high - low) * U or mean + scale * N, in
/// row-major order (the order numpy fills arrays).
inline Expected<Tensor> random_fill(const KernelContext& ctx, DType dtype, const Shape& shape,
                                    bool normal) {
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, dtype, shape));
  auto rs = NumpyRandomState::for_node(ctx);
  const double a = normal ? ctx.attr_float("mean", 0.0f) : ctx.attr_float("low", 0.0f);
  const double b = normal ? ctx.attr_float("scale", 1.0f) : ctx.attr_float("high", 1.0f) - a;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double r = normal ? rs.normal() : rs.uniform();
    // numpy draws in float64, casts to the dtype, then scales and shifts in the dtype.
    if (dtype == DType::kDouble) {
      y.set_from_double(i, r * b + a);
    } else {
      y.set_from_double(i, static_cast<double>(static_cast<float>(r) * static_cast<float>(b) +
                                               static_cast<float>(a)));
    }
  }
  return y;
}

}  // namespace onnxdbg::reference
