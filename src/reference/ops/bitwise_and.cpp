// BitwiseAnd: elementwise bitwise and of two integer tensors of one type with numpy broadcasting
// (BitwiseAnd-18).
#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

Status bitwise_and_kernel(KernelContext& ctx) {
  return binary_elementwise(ctx, Broadcast::kNumpy, VisitInteger{},
                            [](auto x, auto y) { return static_cast<decltype(x)>(x & y); });
}

}  // namespace

void register_bitwise_and(KernelRegistry& r) {
  r.add("BitwiseAnd", 18, bitwise_and_kernel, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
