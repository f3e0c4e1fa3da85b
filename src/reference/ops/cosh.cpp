// Cosh: elementwise hyperbolic cosine (Cosh-9).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status cosh_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::cosh(x); });
}

}  // namespace

void register_cosh(KernelRegistry& r) { r.add("Cosh", 9, cosh_kernel).through(22); }

}  // namespace onnxdbg::reference
