// IsInf: elementwise bool, true where x is +inf (if detect_positive) or -inf (if detect_negative);
// both attributes default to 1 (IsInf-10).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status is_inf_kernel(KernelContext& ctx) {
  const bool neg = ctx.attr_int("detect_negative", 1) != 0;
  const bool pos = ctx.attr_int("detect_positive", 1) != 0;
  return unary_float_predicate(ctx,
                               [neg, pos](auto x) { return std::isinf(x) && (x > 0 ? pos : neg); });
}

}  // namespace

void register_is_inf(KernelRegistry& r) { r.add("IsInf", 10, is_inf_kernel).through(20); }

}  // namespace onnxdbg::reference
