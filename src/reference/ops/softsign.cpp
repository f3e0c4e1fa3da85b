// Softsign: elementwise x / (1 + |x|) (Softsign-1).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status softsign_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return x / (decltype(x){1} + std::fabs(x)); });
}

}  // namespace

void register_softsign(KernelRegistry& r) { r.add("Softsign", 1, softsign_kernel).through(22); }

}  // namespace onnxdbg::reference
