// Asinh: elementwise inverse hyperbolic sine (Asinh-9).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status asinh_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::asinh(x); });
}

}  // namespace

void register_asinh(KernelRegistry& r) { r.add("Asinh", 9, asinh_kernel).through(22); }

}  // namespace onnxdbg::reference
