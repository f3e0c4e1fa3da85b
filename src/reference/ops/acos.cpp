// Acos: elementwise arccosine (Acos-7); |x| > 1 gives NaN.
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status acos_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::acos(x); });
}

}  // namespace

void register_acos(KernelRegistry& r) { r.add("Acos", 7, acos_kernel).through(22); }

}  // namespace onnxdbg::reference
