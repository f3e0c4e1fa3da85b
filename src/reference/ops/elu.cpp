// Elu: x for x >= 0, alpha * (e^x - 1) otherwise (Elu-1/6; alpha defaults to 1).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status elu_kernel(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.0f);
  return unary_float_op(ctx, [alpha](auto x) {
    using T = decltype(x);
    return x < T{0} ? static_cast<T>(alpha) * std::expm1(x) : x;
  });
}

}  // namespace

void register_elu(KernelRegistry& r) { r.add("Elu", 1, elu_kernel).through(22); }

}  // namespace onnxdbg::reference
