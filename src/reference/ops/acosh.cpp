// Acosh: elementwise inverse hyperbolic cosine (Acosh-9); x < 1 gives NaN.
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status acosh_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::acosh(x); });
}

}  // namespace

void register_acosh(KernelRegistry& r) { r.add("Acosh", 9, acosh_kernel).through(22); }

}  // namespace onnxdbg::reference
