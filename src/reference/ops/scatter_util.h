// Shared by ScatterElements, Scatter and ScatterND: the `reduction` attribute (none, add, mul from
// opset 16; max, min from 18) and applying a list of (destination, source) element updates.
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

/// Reads the `reduction` attribute. Errors: kModelError for an unknown value.
inline Expected<Reduction> scatter_reduction(const KernelContext& ctx) {
  const std::string r = ctx.attr_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return model_error(ctx.describe() + ": unknown reduction '" + r + "'");
}

template <class T>
T scatter_combine(T a, T b, Reduction r) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(scatter_combine(static_cast<float>(a), static_cast<float>(b), r));
  } else {
    switch (r) {
      case Reduction::kAdd:
        return static_cast<T>(a + b);
      case Reduction::kMul:
        return static_cast<T>(a * b);
      case Reduction::kMax:
        return std::max(a, b);
      case Reduction::kMin:
        return std::min(a, b);
      case Reduction::kNone:
        break;
    }
    return b;
  }
}

/// For each (dst, src) pair in order, out[dst] = updates[src] (kNone) or
/// reduce(out[dst], updates[src]). Errors: kUnsupported for reductions on bool or string.
inline Status apply_scatter(const KernelContext& ctx, Tensor& out, const Tensor& updates,
                            const std::vector<std::pair<int64_t, int64_t>>& pairs, Reduction r) {
  if (r == Reduction::kNone) {
    for (const auto& [d, s] : pairs) copy_element(updates, s, out, d);
    return Status::ok();
  }
  return visit_all(out.dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
      return unsupported(ctx.describe() + ": reduction '" + ctx.attr_string("reduction", "") +
                         "' is not defined for " + std::string(dtype_name(out.dtype())));
    } else {
      T* o = out.data<T>();
      const T* u = updates.data<T>();
      for (const auto& [d, s] : pairs) o[d] = scatter_combine(o[d], u[s], r);
      return Status::ok();
    }
  });
}

/// ScatterElements semantics (also Scatter-9): output = data with, for every index position p of
/// `indices`, output[p with p[axis] = indices[p]] = updates[p] (reduced when asked).
inline Status scatter_elements_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* data, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const Tensor* upd, ctx.required_input(2));
  ODB_ASSIGN_OR_RETURN(const Reduction red, scatter_reduction(ctx));
  const int64_t rank = data->rank();
  if (rank == 0) return model_error(ctx.describe() + " cannot scatter into a scalar");
  ODB_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis_of(ctx, ctx.attr_int("axis", 0), rank));
  bool ok = ind->rank() == rank && ind->shape() == upd->shape() && upd->dtype() == data->dtype();
  for (int64_t d = 0; ok && d < rank; ++d) ok = d == axis || ind->dim(d) <= data->dim(d);
  if (!ok)
    return model_error(ctx.describe() + ": data (" + shape_to_string(data->shape()) +
                       "), indices (" + shape_to_string(ind->shape()) + ") and updates (" +
                       shape_to_string(upd->shape()) +
                       ") do not fit: indices and updates need the same shape, data's rank and "
                       "dtype, and no larger dimensions outside axis " +
                       std::to_string(axis));
  ODB_ASSIGN_OR_RETURN(auto idx, ints_of_input(ctx, 1, "indices"));
  auto strides = strides_of(data->shape());
  const int64_t axis_stride = strides[static_cast<size_t>(axis)], dim = data->dim(axis);
  strides[static_cast<size_t>(axis)] = 0;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  pairs.reserve(idx.size());
  Status st;
  for_each_broadcast(ind->shape(), {strides}, [&](int64_t i, const int64_t* off) {
    int64_t v = idx[static_cast<size_t>(i)];
    if (v < -dim || v >= dim) {
      if (st.is_ok())
        st = model_error(ctx.describe() + ": index " + std::to_string(v) + " at flat position " +
                         std::to_string(i) + " of indices is out of range for axis " +
                         std::to_string(axis) + " of size " + std::to_string(dim));
      return;
    }
    if (v < 0) v += dim;
    pairs.emplace_back(off[0] + v * axis_stride, i);
  });
  ODB_RETURN_IF_ERROR(st);
  Tensor out = *data;
  ODB_RETURN_IF_ERROR(apply_scatter(ctx, out, *upd, pairs, red));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace onnxdbg::reference
