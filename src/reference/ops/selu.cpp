// Selu: gamma * x for x > 0, gamma * alpha * (e^x - 1) otherwise (Selu-1/6; defaults are the
// float32 values of the self-normalising constants alpha 1.6732632, gamma 1.0507010).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status selu_kernel(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.67326319217681884765625f);
  const double gamma = ctx.attr_float("gamma", 1.05070102214813232421875f);
  return unary_float_op(ctx, [alpha, gamma](auto x) {
    using T = decltype(x);
    const T a = static_cast<T>(alpha), g = static_cast<T>(gamma);
    return x > T{0} ? g * x : g * (a * std::exp(x) - a);
  });
}

}  // namespace

void register_selu(KernelRegistry& r) { r.add("Selu", 1, selu_kernel).through(22); }

}  // namespace onnxdbg::reference
