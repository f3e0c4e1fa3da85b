// IsNaN: elementwise bool, true where x is NaN (IsNaN-9/13).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status is_nan_kernel(KernelContext& ctx) {
  return unary_float_predicate(ctx, [](auto x) { return std::isnan(x); });
}

}  // namespace

void register_is_nan(KernelRegistry& r) { r.add("IsNaN", 9, is_nan_kernel).through(20); }

}  // namespace onnxdbg::reference
