// HardSigmoid: elementwise max(0, min(1, alpha * x + beta)) (HardSigmoid-1/6; alpha 0.2, beta 0.5).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <algorithm>
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status hard_sigmoid_kernel(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 0.2f), beta = ctx.attr_float("beta", 0.5f);
  return unary_float_op(ctx, [alpha, beta](auto x) {
    using T = decltype(x);
    const T y = static_cast<T>(alpha) * x + static_cast<T>(beta);
    return std::max(T{0}, std::min(T{1}, y));
  });
}

}  // namespace

void register_hard_sigmoid(KernelRegistry& r) {
  r.add("HardSigmoid", 1, hard_sigmoid_kernel).through(22);
}

}  // namespace onnxdbg::reference
