// BitwiseXor: elementwise bitwise xor of two integer tensors of one type with numpy broadcasting
// (BitwiseXor-18).
#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

Status bitwise_xor_kernel(KernelContext& ctx) {
  return binary_elementwise(ctx, Broadcast::kNumpy, VisitInteger{},
                            [](auto x, auto y) { return static_cast<decltype(x)>(x ^ y); });
}

}  // namespace

void register_bitwise_xor(KernelRegistry& r) {
  r.add("BitwiseXor", 18, bitwise_xor_kernel, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
