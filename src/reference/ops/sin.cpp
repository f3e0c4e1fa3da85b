// Sin: elementwise sine (Sin-7), radians.
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status sin_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::sin(x); });
}

}  // namespace

void register_sin(KernelRegistry& r) { r.add("Sin", 7, sin_kernel).through(22); }

}  // namespace onnxdbg::reference
