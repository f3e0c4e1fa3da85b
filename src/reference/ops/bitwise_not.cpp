// BitwiseNot: elementwise bitwise complement of an integer tensor (BitwiseNot-18).
#include "reference/ops/binary_common.h"
#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

Status bitwise_not_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  return VisitInteger{}(x->dtype(), ctx.describe(), [&](auto tag) -> Status {
    using T = decltype(tag);
    map_input_of_same_type<T>(ctx, *x, [](T v) { return static_cast<T>(~v); });
    return Status::ok();
  });
}

}  // namespace

void register_bitwise_not(KernelRegistry& r) {
  r.add("BitwiseNot", 18, bitwise_not_kernel, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
