// Atanh: elementwise inverse hyperbolic tangent (Atanh-9); |x| > 1 gives NaN.
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status atanh_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::atanh(x); });
}

}  // namespace

void register_atanh(KernelRegistry& r) { r.add("Atanh", 9, atanh_kernel).through(22); }

}  // namespace onnxdbg::reference
