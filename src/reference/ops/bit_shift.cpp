// BitShift: elementwise X << Y or X >> Y on unsigned integers with numpy broadcasting
// (BitShift-11, attribute direction "LEFT" or "RIGHT"). Shifting by the bit width or more gives 0.
#include <type_traits>

#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

Status bit_shift_kernel(KernelContext& ctx) {
  const std::string dir = ctx.attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return model_error(ctx.describe() +
                       ": attribute direction must be \"LEFT\" or \"RIGHT\", got \"" + dir + "\"");
  const bool left = dir == "LEFT";
  return binary_elementwise(
      ctx, Broadcast::kNumpy, VisitNumeric{}, [&](auto x, auto y) -> decltype(x) {
        using T = decltype(x);
        if constexpr (std::is_unsigned_v<T>) {
          if (y >= sizeof(T) * 8) return T{0};
          return static_cast<T>(left ? static_cast<WrapType<T>>(x) << y : x >> y);
        } else {
          return T{0};  // unreachable: checked below before any element is computed
        }
      });
}

Status bit_shift_checked(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const DType t = x->dtype();
  if (t != DType::kUint8 && t != DType::kUint16 && t != DType::kUint32 && t != DType::kUint64)
    return model_error(ctx.describe() + " takes unsigned integers, not " +
                       std::string(dtype_name(t)));
  return bit_shift_kernel(ctx);
}

}  // namespace

void register_bit_shift(KernelRegistry& r) { r.add("BitShift", 11, bit_shift_checked).through(28); }

}  // namespace onnxdbg::reference
