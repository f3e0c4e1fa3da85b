// ThresholdedRelu: x for x > alpha, 0 otherwise (ThresholdedRelu-10; alpha defaults to 1).
// float16/bfloat16 inputs are computed in float32 and rounded back by the interpreter.
#include <cmath>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status thresholded_relu_kernel(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.0f);
  return unary_float_op(ctx, [alpha](auto x) {
    using T = decltype(x);
    return x > static_cast<T>(alpha) ? x : T{0};
  });
}

}  // namespace

void register_thresholded_relu(KernelRegistry& r) {
  r.add("ThresholdedRelu", 10, thresholded_relu_kernel).through(22);
}

}  // namespace onnxdbg::reference
