// Mod: elementwise remainder with numpy broadcasting (Mod-10/13). fmod=0 (integers only): the
// result takes the divisor's sign, like Python's %; fmod=1: C's fmod, the dividend's sign.
// Integer division by zero is a model error; fmod=0 on floating-point inputs is refused by the
// spec.
#include <atomic>
#include <cmath>
#include <type_traits>

#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

Status mod_kernel(KernelContext& ctx) {
  const bool fmod = ctx.attr_int("fmod", 0) != 0;
  // Set from several threads (binary_elementwise).
  std::atomic<bool> by_zero{false}, float_without_fmod{false};
  Status st = binary_elementwise(ctx, Broadcast::kNumpy, VisitNumeric{}, [&](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      if (!fmod) float_without_fmod.store(true, std::memory_order_relaxed);
      return std::fmod(x, y);
    } else {
      if (y == 0) {
        by_zero.store(true, std::memory_order_relaxed);
        return T{0};
      }
      if constexpr (std::is_signed_v<T>) {
        if (y == -1) return T{0};  // avoids the overflowing (and trapping) min % -1
      }
      T r = static_cast<T>(x % y);  // truncated: sign of x
      if constexpr (std::is_signed_v<T>) {
        if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
      }
      return r;
    }
  });
  ODB_RETURN_IF_ERROR(st);
  if (float_without_fmod)
    return model_error(ctx.describe() + ": floating-point inputs need attribute fmod=1 (ONNX Mod)");
  if (by_zero) return model_error(ctx.describe() + ": integer modulo by zero");
  return Status::ok();
}

}  // namespace

void register_mod(KernelRegistry& r) { r.add("Mod", 10, mod_kernel); }

}  // namespace onnxdbg::reference
