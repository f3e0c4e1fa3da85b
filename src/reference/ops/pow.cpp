// Pow: elementwise base ^ exponent (Pow-1/7/12/13/15). From opset 12 the exponent may have another
// numeric type than the base; the output has the base's type. Opset 1-6 use legacy broadcasting.
// Registered HalfMode::kNative because the output type follows the base alone.
#include <cmath>
#include <limits>
#include <type_traits>

#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

// double -> integer T without undefined behaviour: NaN gives 0, out-of-range values saturate.
template <class T>
T saturate_to(double v) {
  if (std::isnan(v)) return T{0};
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  return static_cast<T>(v);
}

template <class T, class E>
T power(T x, E y) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
    if constexpr (std::is_signed_v<E>) {
      if (y < E{0}) {  // |x| > 1 gives a fraction that truncates to 0
        if (x == T{1}) return T{1};
        if constexpr (std::is_signed_v<T>) {
          if (x == T{-1}) return (y % 2 == 0) ? T{1} : T{-1};
        }
        return T{0};
      }
    }
    T result{1}, base = x;  // square-and-multiply, wrapping like repeated Mul
    for (auto e = y; e > E{0}; e /= 2) {
      if (e % 2 == 1) result = wrapping_mul(result, base);
      base = wrapping_mul(base, base);
    }
    return result;
  } else if constexpr (std::is_integral_v<T>) {
    return saturate_to<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  } else {
    if constexpr (std::is_same_v<T, float>) {
      // Squaring (spectrograms, variances) skips pow: the square of a float is exact in double,
      // so rounding it to float gives the bits pow gives.
      if (static_cast<double>(y) == 2.0) {
        const double d = x;
        return static_cast<float>(d * d);
      }
    }
    return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  }
}

// float16/bfloat16 are computed in float32; other tensors are borrowed as they are.
Expected<const Tensor*> as_computable(const Tensor* t, Tensor& storage) {
  if (t->dtype() != DType::kFloat16 && t->dtype() != DType::kBFloat16) return t;
  ODB_ASSIGN_OR_RETURN(storage, cast_tensor(*t, DType::kFloat));
  return &storage;
}

template <Broadcast kMode>
Status pow_kernel(KernelContext& ctx) {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  Tensor b_storage, a_half, b_half;
  ODB_RETURN_IF_ERROR(binary_inputs(ctx, kMode, a, b, b_storage, /*allow_mixed_types=*/true));
  const DType out_type = a->dtype();
  ODB_ASSIGN_OR_RETURN(a, as_computable(a, a_half));
  ODB_ASSIGN_OR_RETURN(b, as_computable(b, b_half));
  Tensor out;
  ODB_RETURN_IF_ERROR(visit_numeric(a->dtype(), ctx, [&](auto ta) -> Status {
    return visit_numeric(b->dtype(), ctx, [&](auto tb) -> Status {
      using T = decltype(ta);
      using E = decltype(tb);
      ODB_ASSIGN_OR_RETURN(
          out, (broadcast_binary<T, E, T>(*a, *b, [](T x, E y) { return power(x, y); })));
      return Status::ok();
    });
  }));
  if (out.dtype() != out_type) {
    ODB_ASSIGN_OR_RETURN(out, cast_tensor(out, out_type));
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_pow(KernelRegistry& r) {
  r.add("Pow", 1, pow_kernel<Broadcast::kLegacy>, HalfMode::kNative);
  r.add("Pow", 7, pow_kernel<Broadcast::kNumpy>, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
