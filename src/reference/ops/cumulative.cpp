// CumSum (CumSum-11/14) and CumProd (CumProd-26): the cumulative sum or product along the axis
// given by the scalar input 1, optionally exclusive (the element itself left out: the first output
// is 0 or 1) and/or reverse. Floats accumulate in double; integers wrap around.
#include <type_traits>

#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

// The one loop of both ops; `Product` picks the product over the sum.
template <bool Product>
Status cumulative_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* axis_t, ctx.required_input(1));
  auto axis_v = to_int64_vector(*axis_t);
  if (!axis_v)
    return std::move(axis_v).status().with_context("reading the axis input of " + ctx.describe());
  if (axis_v->size() != 1)
    return model_error(ctx.describe() + ": axis must be a single value, got shape " +
                       shape_to_string(axis_t->shape()));
  ODB_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis((*axis_v)[0], x->rank()));
  if (x->rank() == 0) return model_error(ctx.describe() + " needs an input of rank >= 1");
  const bool exclusive = ctx.attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.attr_int("reverse", 0) != 0;
  int64_t outer = 1, len = x->dim(axis), inner = 1;
  for (int64_t d = 0; d < x->rank(); ++d) {
    if (d < axis) outer *= x->dim(d);
    if (d > axis) inner *= x->dim(d);
  }
  return visit_numeric(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    Tensor out(x->dtype(), x->shape());
    const T* px = x->data<T>();
    T* po = out.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < inner; ++in) {
        Acc acc{Product ? 1 : 0};
        auto combine = [](Acc a, Acc b) {
          return Product ? wrapping_mul(a, b) : wrapping_add(a, b);
        };
        for (int64_t s = 0; s < len; ++s) {
          const int64_t k = reverse ? len - 1 - s : s;
          const int64_t i = (o * len + k) * inner + in;
          if (exclusive) {
            po[i] = static_cast<T>(acc);
            acc = combine(acc, static_cast<Acc>(px[i]));
          } else {
            acc = combine(acc, static_cast<Acc>(px[i]));
            po[i] = static_cast<T>(acc);
          }
        }
      }
    }
    ctx.set_output(0, std::move(out));
    return Status::ok();
  });
}

}  // namespace

void register_cum_sum(KernelRegistry& r) {
  r.add("CumSum", 11, cumulative_kernel<false>).accumulates_in_double();
}

void register_cum_prod(KernelRegistry& r) {
  r.add("CumProd", 26, cumulative_kernel<true>).accumulates_in_double();
}

}  // namespace onnxdbg::reference
