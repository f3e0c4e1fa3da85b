// Div: elementwise A / B (Div-1/6/7/13/14). Integer division truncates toward zero, as C and
// ONNX Runtime do; an integer division by zero is a model error, not a crash.
// Opset 1-6 use legacy broadcasting (attributes broadcast/axis), 7 on numpy broadcasting.
#include <atomic>
#include <type_traits>

#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

template <Broadcast kMode>
Status div_kernel(KernelContext& ctx) {
  std::atomic<bool> by_zero{false};  // set from several threads (binary_elementwise)
  Status st = binary_elementwise(ctx, kMode, VisitNumeric{}, [&by_zero](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>) {
      if (y == 0) {
        by_zero.store(true, std::memory_order_relaxed);
        return T{0};
      }
      // x / -1 is -x, which overflows for the minimum value (and traps on x86).
      if constexpr (std::is_signed_v<T>) {
        if (y == -1) return wrapping_sub(T{0}, x);
      }
      return static_cast<T>(x / y);
    } else {
      return x / y;
    }
  });
  ODB_RETURN_IF_ERROR(st);
  if (by_zero) return model_error(ctx.describe() + ": integer division by zero");
  return Status::ok();
}

}  // namespace

void register_div(KernelRegistry& r) {
  r.add("Div", 1, div_kernel<Broadcast::kLegacy>);
  r.add("Div", 7, div_kernel<Broadcast::kNumpy>);
}

}  // namespace onnxdbg::reference
