// BitwiseOr: elementwise bitwise or of two integer tensors of one type with numpy broadcasting
// (BitwiseOr-18).
#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

Status bitwise_or_kernel(KernelContext& ctx) {
  return binary_elementwise(ctx, Broadcast::kNumpy, VisitInteger{},
                            [](auto x, auto y) { return static_cast<decltype(x)>(x | y); });
}

}  // namespace

void register_bitwise_or(KernelRegistry& r) {
  r.add("BitwiseOr", 18, bitwise_or_kernel, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
