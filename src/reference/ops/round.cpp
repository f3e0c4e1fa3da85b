// Round: elementwise rounding to the nearest integer, halves to even (Round-11).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status round_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) {
    // Explicit half-to-even so the result does not depend on the FP rounding mode.
    const auto r = std::round(x);  // halves away from zero
    if (std::fabs(x - std::trunc(x)) == decltype(x){0.5}) return decltype(x){2} * std::round(x / 2);
    return r;
  });
}

}  // namespace

void register_round(KernelRegistry& r) { r.add("Round", 11, round_kernel).through(22); }

}  // namespace onnxdbg::reference
