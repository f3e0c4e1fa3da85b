// Celu: max(0, x) + min(0, alpha * (e^(x / alpha) - 1)) (Celu-12; alpha defaults to 1).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <algorithm>
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status celu_kernel(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.0f);
  return unary_float_op(ctx, [alpha](auto x) {
    using T = decltype(x);
    const T a = static_cast<T>(alpha);
    return std::max(T{0}, x) + std::min(T{0}, a * std::expm1(x / a));
  });
}

}  // namespace

void register_celu(KernelRegistry& r) { r.add("Celu", 12, celu_kernel).through(28); }

}  // namespace onnxdbg::reference
