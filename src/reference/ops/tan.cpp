// Tan: elementwise tangent (Tan-7), radians.
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status tan_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::tan(x); });
}

}  // namespace

void register_tan(KernelRegistry& r) { r.add("Tan", 7, tan_kernel).through(22); }

}  // namespace onnxdbg::reference
