// Range (ONNX Range-11): start, start+delta, ... up to but excluding limit;
// n = max(ceil((limit - start) / delta), 0) elements, element i = start + i * delta.
#include <cmath>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status range(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* start_t, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* limit_t, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const Tensor* delta_t, ctx.required_input(2));
  for (const Tensor* t : {start_t, limit_t, delta_t})
    if (t->numel() != 1 || t->dtype() != start_t->dtype())
      return model_error(ctx.describe() +
                         ": start, limit and delta must be single values of one "
                         "dtype (got shapes " +
                         shape_to_string(start_t->shape()) + ", " +
                         shape_to_string(limit_t->shape()) + ", " +
                         shape_to_string(delta_t->shape()) + ")");
  return visit_numeric(start_t->dtype(), ctx.describe(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T start = start_t->data<T>()[0], limit = limit_t->data<T>()[0],
            delta = delta_t->data<T>()[0];
    if (delta == T{0}) return model_error(ctx.describe() + ": delta is 0");
    int64_t n = 0;
    if constexpr (std::is_floating_point_v<T>) {
      const double c = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                 static_cast<double>(delta));
      if (!std::isfinite(c) || c > 1e12)
        return model_error(ctx.describe() + ": the range has no finite, reasonable length");
      n = std::max<int64_t>(static_cast<int64_t>(c), 0);
    } else {
      const auto diff = static_cast<long double>(limit) - static_cast<long double>(start);
      const auto d = static_cast<long double>(delta);
      if ((diff > 0 && d > 0) || (diff < 0 && d < 0)) {
        const long double c = std::ceil(diff / d);
        if (c > 1e12L) return model_error(ctx.describe() + ": the range has no reasonable length");
        n = static_cast<int64_t>(c);
      }
    }
    ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, start_t->dtype(), {n}));
    T* o = out.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>)
        o[i] = static_cast<T>(static_cast<double>(start) +
                              static_cast<double>(i) * static_cast<double>(delta));
      else
        // In uint64 arithmetic, whose wrap-around is defined: start + i * delta can leave T's
        // range at the last element (start = INT64_MIN, delta = 2^62) where the spec's formula
        // wraps the same way.
        o[i] = static_cast<T>(static_cast<uint64_t>(start) +
                              static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
    }
    ctx.set_output(0, std::move(out));
    return Status::ok();
  });
}

}  // namespace

// Range-27 added float16/bfloat16 and `stash_type`, which has no effect for other types; this
// kernel refuses those two types.
void register_range(KernelRegistry& r) { r.add("Range", 11, range, HalfMode::kNative).through(27); }

}  // namespace onnxdbg::reference
