// Softplus: elementwise log(e^x + 1) (Softplus-1), evaluated without overflow for large x.
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status softplus_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) {
    using T = decltype(x);
    return x > T{0} ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  });
}

}  // namespace

void register_softplus(KernelRegistry& r) { r.add("Softplus", 1, softplus_kernel).through(22); }

}  // namespace onnxdbg::reference
