// Cos: elementwise cosine (Cos-7), radians.
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status cos_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::cos(x); });
}

}  // namespace

void register_cos(KernelRegistry& r) { r.add("Cos", 7, cos_kernel).through(22); }

}  // namespace onnxdbg::reference
