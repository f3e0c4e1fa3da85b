// Mean: elementwise mean of one or more inputs with numpy broadcasting (Mean-1/6/8/13; before
// opset 8 the shapes had to be equal, a case the broadcasting kernel also covers). Float types
// only.
#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

Status mean_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(auto ins, variadic_inputs(ctx));
  return visit_float(ins[0]->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    return variadic_fold<T>(
        ctx, ins, [](T acc, T x) { return acc + x; },
        [](T acc, size_t n) { return acc / static_cast<T>(n); });
  });
}

}  // namespace

void register_mean(KernelRegistry& r) { r.add("Mean", 1, mean_kernel).accumulates_in_double(); }

}  // namespace onnxdbg::reference
