// Range (ONNX Range-11/27): start, start+delta, ... up to but excluding limit;
// n = max(ceil((limit - start) / delta), 0) elements, element i = start + i * delta. Range-27's
// float16/bfloat16 compute in `stash_type` (float32 by default, or float64) and round once, as
// numpy.arange in that type followed by astype does (the ONNX reference implementation).
#include <cmath>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

// float16/bfloat16 (Range-27): the values in stash type S, rounded to the output type once.
template <class S>
Status range_in(KernelContext& ctx, const Tensor& start_t, const Tensor& limit_t,
                const Tensor& delta_t) {
  const auto start = static_cast<S>(start_t.get_as_double(0));
  const auto limit = static_cast<S>(limit_t.get_as_double(0));
  const auto delta = static_cast<S>(delta_t.get_as_double(0));
  if (delta == S{0}) return model_error(ctx.describe() + ": delta is 0");
  const double c = std::ceil(static_cast<double>((limit - start) / delta));
  if (!std::isfinite(c) || c > 1e12)
    return model_error(ctx.describe() + ": the range has no finite, reasonable length");
  const int64_t n = std::max<int64_t>(static_cast<int64_t>(c), 0);
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, start_t.dtype(), {n}));
  for (int64_t i = 0; i < n; ++i)
    out.set_from_double(i, static_cast<double>(start + static_cast<S>(i) * delta));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status range_half(KernelContext& ctx, const Tensor& start_t, const Tensor& limit_t,
                  const Tensor& delta_t) {
  const int64_t stash = ctx.attr_int("stash_type", static_cast<int64_t>(DType::kFloat));
  if (stash == static_cast<int64_t>(DType::kFloat))
    return range_in<float>(ctx, start_t, limit_t, delta_t);
  if (stash == static_cast<int64_t>(DType::kDouble))
    return range_in<double>(ctx, start_t, limit_t, delta_t);
  return model_error(ctx.describe() + ": stash_type " + std::to_string(stash) +
                     " is neither 1 (float) nor 11 (double)");
}

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
  if (start_t->dtype() == DType::kFloat16 || start_t->dtype() == DType::kBFloat16)
    return range_half(ctx, *start_t, *limit_t, *delta_t);
  return visit_numeric(start_t->dtype(), ctx, [&](auto tag) -> Status {
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

// Range-27 added float16/bfloat16 and `stash_type`, which has no effect for other types (an
// opset-11 model cannot give float16 inputs: its checker refuses them).
void register_range(KernelRegistry& r) { r.add("Range", 11, range, HalfMode::kNative).through(27); }

}  // namespace onnxdbg::reference
