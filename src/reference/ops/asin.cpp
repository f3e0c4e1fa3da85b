// Asin: elementwise arcsine (Asin-7); |x| > 1 gives NaN.
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status asin_kernel(KernelContext& ctx) {
  return unary_float_op(ctx, [](auto x) { return std::asin(x); });
}

}  // namespace

void register_asin(KernelRegistry& r) { r.add("Asin", 7, asin_kernel).through(22); }

}  // namespace onnxdbg::reference
