// Helpers shared by the data-movement kernels in ops/ (shape, slicing, gathering, padding): block
// copies of any dtype (strings included), row-major index iteration, and reading int lists from
// inputs or attributes with error messages that name the node.
#pragma once

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "reference/kernel_util.h"

namespace onnxdbg::reference {

/// Copies the n elements src[i, i+n) to dst[j, j+n) (flat indices); dst must have src's dtype.
inline void copy_elements(const Tensor& src, int64_t i, Tensor& dst, int64_t j, int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DType::kString) {
    for (int64_t k = 0; k < n; ++k)
      dst.strings()[static_cast<size_t>(j + k)] = src.strings()[static_cast<size_t>(i + k)];
    return;
  }
  const size_t es = dtype_size(src.dtype());
  std::memcpy(dst.raw() + static_cast<size_t>(j) * es, src.raw() + static_cast<size_t>(i) * es,
              static_cast<size_t>(n) * es);
}

/// "[1, 2, 3]", for error messages.
inline std::string list_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// Product of shape[begin, end) (1 for an empty range).
inline int64_t dims_product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

/// Calls f(idx) for every multi-index of `shape` in row-major order (idx has shape.size() entries).
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  for (int64_t d : shape)
    if (d <= 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  while (true) {
    f(static_cast<const std::vector<int64_t>&>(idx));
    size_t d = shape.size();
    while (d > 0) {
      --d;
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (shape.empty()) return;
  }
}

/// The ints of input i (int32 or int64, any rank), naming the node and `what` on error.
inline Expected<std::vector<int64_t>> ints_of_input(const KernelContext& ctx, size_t i,
                                                    const std::string& what) {
  ODB_ASSIGN_OR_RETURN(const Tensor* t, ctx.required_input(i));
  auto v = to_int64_vector(*t);
  if (!v) return model_error(ctx.describe() + " input '" + what + "': " + v.status().message());
  return std::move(*v);
}

/// The ints of optional input i, or nullopt when it is omitted.
inline Expected<std::optional<std::vector<int64_t>>> optional_ints_input(const KernelContext& ctx,
                                                                         size_t i,
                                                                         const std::string& what) {
  if (!ctx.input(i)) return std::optional<std::vector<int64_t>>();
  ODB_ASSIGN_OR_RETURN(auto v, ints_of_input(ctx, i, what));
  return std::optional<std::vector<int64_t>>(std::move(v));
}

/// Int list given as input i from opset `input_since` on and as attribute `name` before; nullopt
/// when neither is present.
inline Expected<std::optional<std::vector<int64_t>>> ints_from_input_or_attr(
    const KernelContext& ctx, size_t i, int64_t input_since, const std::string& name) {
  if (ctx.opset() >= input_since) return optional_ints_input(ctx, i, name);
  if (!ctx.has_attr(name)) return std::optional<std::vector<int64_t>>();
  return std::optional<std::vector<int64_t>>(ctx.attr_ints(name));
}

/// A single-element int32/int64 tensor as int64, naming the node and `what` on error.
inline Expected<int64_t> scalar_int_of(const KernelContext& ctx, const Tensor& t,
                                       const std::string& what) {
  auto v = to_int64_vector(t);
  if (!v) return model_error(ctx.describe() + " input '" + what + "': " + v.status().message());
  if (v->size() != 1)
    return model_error(ctx.describe() + " input '" + what + "' must hold one value, it has shape " +
                       shape_to_string(t.shape()));
  return (*v)[0];
}

/// Normalises every axis of `axes` into [0, rank) and rejects repeats, naming the node.
inline Expected<std::vector<int64_t>> normalize_axes(const KernelContext& ctx,
                                                     const std::vector<int64_t>& axes,
                                                     int64_t rank) {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    const int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= rank)
      return model_error(ctx.describe() + ": axis " + std::to_string(a) +
                         " is out of range for rank " + std::to_string(rank) + " (axes " +
                         list_to_string(axes) + ")");
    if (seen[static_cast<size_t>(n)])
      return model_error(ctx.describe() + ": axis " + std::to_string(a) + " is repeated in axes " +
                         list_to_string(axes));
    seen[static_cast<size_t>(n)] = true;
    out.push_back(n);
  }
  return out;
}

/// Normalises one axis into [0, rank), naming the node on error.
inline Expected<int64_t> normalize_axis_of(const KernelContext& ctx, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return model_error(ctx.describe() + ": axis " + std::to_string(axis) +
                       " is out of range for an input of rank " + std::to_string(rank));
  return a;
}

/// Tensor::make with the node named on error (negative dims, overflow).
inline Expected<Tensor> make_output(const KernelContext& ctx, DType dtype, const Shape& shape) {
  auto t = Tensor::make(dtype, shape);
  if (!t)
    return model_error(ctx.describe() + ": cannot create an output of shape " +
                       list_to_string(shape) + ": " + t.status().message());
  return std::move(*t);
}

/// As make_output, its elements unspecified (Tensor::make_uninitialized): for kernels that write
/// every element, saving the zero fill (4% of a QLinearConv CNN's run).
inline Expected<Tensor> make_output_uninitialized(const KernelContext& ctx, DType dtype,
                                                  const Shape& shape) {
  auto t = Tensor::make_uninitialized(dtype, shape);
  if (!t)
    return model_error(ctx.describe() + ": cannot create an output of shape " +
                       list_to_string(shape) + ": " + t.status().message());
  return std::move(*t);
}

}  // namespace onnxdbg::reference
