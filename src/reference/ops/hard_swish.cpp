// HardSwish: elementwise x * max(0, min(1, x / 6 + 0.5)) (HardSwish-14).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <algorithm>
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status hard_swish_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) {
    using T = decltype(x);
    return x * std::max(T{0}, std::min(T{1}, x / T{6} + T{0.5}));
  });
}

}  // namespace

void register_hard_swish(KernelRegistry& r) {
  r.add("HardSwish", 14, hard_swish_kernel).through(22);
}

}  // namespace onnxdbg::reference
