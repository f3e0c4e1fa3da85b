// Sinh: elementwise hyperbolic sine (Sinh-9).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status sinh_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::sinh(x); });
}

}  // namespace

void register_sinh(KernelRegistry& r) { r.add("Sinh", 9, sinh_kernel).through(22); }

}  // namespace onnxdbg::reference
