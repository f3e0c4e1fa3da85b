// Equal: elementwise bool A == B (Equal-1/7/11/13); float16/bfloat16 compare exactly as float32.
// Opset 1-6 use legacy broadcasting (attributes broadcast/axis), 7 on numpy broadcasting.
#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

template <Broadcast kMode>
Status equal_kernel(KernelContext& ctx) {
  return binary_elementwise(ctx, kMode, VisitNumericOrBool{},
                            [](auto x, auto y) { return x == y; });
}

}  // namespace

void register_equal(KernelRegistry& r) {
  r.add("Equal", 1, equal_kernel<Broadcast::kLegacy>);
  // Equal-19 added strings, which binary_elementwise refuses.
  r.add("Equal", 7, equal_kernel<Broadcast::kNumpy>).through(19);
}

}  // namespace onnxdbg::reference
