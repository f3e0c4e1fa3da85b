// Atan: elementwise arctangent (Atan-7).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status atan_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::atan(x); });
}

}  // namespace

void register_atan(KernelRegistry& r) { r.add("Atan", 7, atan_kernel).through(22); }

}  // namespace onnxdbg::reference
