// Clip: elementwise min(max(x, min), max). Clip-1/6 take min and max as float attributes; from
// Clip-11 they are optional scalar inputs of x's type (integer types from 12). When min > max every
// element becomes max, as numpy.clip does. NaN stays NaN.
#include <cmath>
#include <limits>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

template <class T>
T clip_value(T x, T lo, T hi) {
  const T y = x < lo ? lo : x;
  return hi < y ? hi : y;
}

Status clip_v1_kernel(KernelContext& ctx) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const double lo = ctx.attr_float("min", -kInf), hi = ctx.attr_float("max", kInf);
  return unary_float_op(ctx, [lo, hi](auto x) {
    using T = decltype(x);
    return clip_value(x, static_cast<T>(lo), static_cast<T>(hi));
  });
}

// The scalar bound at input `i`, or `def` when it is omitted.
template <class T>
Expected<T> bound(const KernelContext& ctx, size_t i, T def) {
  const Tensor* t = ctx.input(i);
  if (!t) return def;
  if (t->dtype() != DTypeOf<T>::value)
    return model_error(ctx.describe() + ": input " + std::to_string(i) + " has element type " +
                       std::string(dtype_name(t->dtype())) + ", expected " +
                       std::string(dtype_name(DTypeOf<T>::value)));
  if (t->numel() != 1)
    return model_error(ctx.describe() + ": input " + std::to_string(i) +
                       " must be a scalar, got shape " + shape_to_string(t->shape()));
  return t->data<T>()[0];
}

Status clip_v11_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  return visit_numeric(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    using L = std::numeric_limits<T>;
    ODB_ASSIGN_OR_RETURN(T lo, bound<T>(ctx, 1, L::has_infinity ? -L::infinity() : L::lowest()));
    ODB_ASSIGN_OR_RETURN(T hi, bound<T>(ctx, 2, L::has_infinity ? L::infinity() : L::max()));
    map_input_of_same_type<T>(ctx, *x, [lo, hi](T v) { return clip_value(v, lo, hi); });
    return Status::ok();
  });
}

}  // namespace

void register_clip(KernelRegistry& r) {
  r.add("Clip", 1, clip_v1_kernel);
  r.add("Clip", 11, clip_v11_kernel);
}

}  // namespace onnxdbg::reference
