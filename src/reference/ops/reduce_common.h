// Shared code for the Reduce* kernels and ArgMax/ArgMin: axes from an attribute (before opset 13
// for ReduceSum, 18 for the others) or from the optional input 1 with noop_with_empty_axes,
// keepdims, and accumulation in double (floats) or 64-bit integers (integer types).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "onnxdbg/tensor.h"
#include "reference/kernel.h"
#include "reference/kernel_util.h"

namespace onnxdbg::reference {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };
/// Where a Reduce* version reads its axes from.
enum class AxesFrom { kAttribute, kInput };

/// Which dims of a rank-`rank` tensor a reduction removes; empty `axes` means all of them.
/// Errors: kModelError for an axis out of [-rank, rank) or repeated.
inline Expected<std::vector<bool>> reduced_dims(const KernelContext& ctx,
                                                const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty()),
      seen(static_cast<size_t>(rank));
  for (int64_t a : axes) {
    const int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= rank)
      return model_error(ctx.describe() + ": axis " + std::to_string(a) +
                         " is out of range for rank " + std::to_string(rank));
    if (seen[static_cast<size_t>(n)])
      return model_error(ctx.describe() + ": axis " + std::to_string(a) + " is repeated");
    seen[static_cast<size_t>(n)] = reduced[static_cast<size_t>(n)] = true;
  }
  return reduced;
}

// Per-kind accumulator: Acc is double for floats and for kinds whose result is not an integer
// (L2, LogSum, LogSumExp), else the 64-bit integer of T's signedness.
template <ReduceKind K, class T>
struct ReduceOp {
  static constexpr bool kViaDouble = std::is_floating_point_v<T> || K == ReduceKind::kL2 ||
                                     K == ReduceKind::kLogSum || K == ReduceKind::kLogSumExp;
  using Acc = std::conditional_t<kViaDouble, double,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

  static Acc init() {
    if constexpr (K == ReduceKind::kMax && kViaDouble) {
      return -std::numeric_limits<double>::infinity();
    } else if constexpr (K == ReduceKind::kMax) {
      return static_cast<Acc>(std::numeric_limits<T>::lowest());
    } else if constexpr (K == ReduceKind::kMin && kViaDouble) {
      return std::numeric_limits<double>::infinity();
    } else if constexpr (K == ReduceKind::kMin) {
      return static_cast<Acc>(std::numeric_limits<T>::max());
    } else if constexpr (K == ReduceKind::kProd) {
      return Acc{1};
    } else {
      return Acc{0};
    }
  }
  // `shift` is the row maximum for LogSumExp, else unused.
  static Acc step(Acc a, T x, double shift) {
    // int8 data sign-extends on purpose (it is a number, not a character).
    const Acc v = static_cast<Acc>(x);  // NOLINT(bugprone-signed-char-misuse)
    switch (K) {
      case ReduceKind::kMax:
        if constexpr (kViaDouble) {
          if (std::isnan(v)) return v;
        }
        return v > a ? v : a;
      case ReduceKind::kMin:
        if constexpr (kViaDouble) {
          if (std::isnan(v)) return v;
        }
        return v < a ? v : a;
      case ReduceKind::kProd:
        return mul(a, v);
      case ReduceKind::kL1:
        if constexpr (std::is_unsigned_v<Acc>)
          return add(a, v);
        else
          return v < 0 ? sub(a, v) : add(a, v);
      case ReduceKind::kL2:
      case ReduceKind::kSumSquare:
        return add(a, mul(v, v));
      case ReduceKind::kLogSumExp:
        if constexpr (kViaDouble)
          return a + std::exp(static_cast<double>(v) - shift);
        else
          return a;
      default:
        return add(a, v);  // kSum, kMean, kLogSum
    }
  }
  static T finish(Acc a, int64_t count, double shift) {
    // Branches alike in one instantiation differ in others (if constexpr on kViaDouble).
    // NOLINTBEGIN(bugprone-branch-clone)
    switch (K) {
      case ReduceKind::kMean:
        if constexpr (kViaDouble)
          return to_t(a / static_cast<double>(count));
        else
          return count == 0 ? T{0} : to_t(a / static_cast<Acc>(count));
      case ReduceKind::kL2:
        if constexpr (kViaDouble)
          return to_t(std::sqrt(a));
        else
          return to_t(a);
      case ReduceKind::kLogSum:
        if constexpr (kViaDouble)
          return to_t(std::log(a));
        else
          return to_t(a);
      case ReduceKind::kLogSumExp:
        if constexpr (kViaDouble)
          return to_t(std::isinf(shift) ? shift : shift + std::log(a));
        else
          return to_t(a);
      default:
        return to_t(a);
    }
    // NOLINTEND(bugprone-branch-clone)
  }

 private:
  // Integer accumulators wrap in two's complement rather than overflow (undefined for int64).
  using Bits = std::conditional_t<kViaDouble, double, uint64_t>;
  static Acc add(Acc a, Acc b) {
    return static_cast<Acc>(static_cast<Bits>(a) + static_cast<Bits>(b));
  }
  static Acc sub(Acc a, Acc b) {
    return static_cast<Acc>(static_cast<Bits>(a) - static_cast<Bits>(b));
  }
  static Acc mul(Acc a, Acc b) {
    return static_cast<Acc>(static_cast<Bits>(a) * static_cast<Bits>(b));
  }
  // A floating-point sum of an integer type saturates (NaN gives 0); otherwise a plain cast.
  static T to_t(Acc v) {
    if constexpr (!std::is_floating_point_v<T> && std::is_floating_point_v<Acc>) {
      if (std::isnan(v)) return T{0};
      if (v >= static_cast<double>(std::numeric_limits<T>::max()))
        return std::numeric_limits<T>::max();
      if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
        return std::numeric_limits<T>::lowest();
    }
    return static_cast<T>(v);
  }
};

/// A Reduce* kernel: output 0 = input 0 reduced over the axes, keepdims (default 1) keeping them as
/// size-1 dims. With AxesFrom::kInput an empty or omitted axes input reduces everything unless
/// noop_with_empty_axes=1, which returns the input unchanged. Errors: kModelError for bad axes,
/// kUnsupported for non-numeric inputs.
template <ReduceKind K, AxesFrom kAxes>
Status reduce_tensor(KernelContext& ctx, const Tensor* x) {
  std::vector<int64_t> axes;
  if constexpr (kAxes == AxesFrom::kAttribute) {
    axes = ctx.attr_ints("axes");
  } else {
    if (const Tensor* t = ctx.input(1)) {
      auto v = to_int64_vector(*t);
      if (!v)
        return std::move(v).status().with_context("reading the axes input of " + ctx.describe());
      axes = std::move(*v);
    }
    if (axes.empty() && ctx.attr_int("noop_with_empty_axes", 0) != 0) {
      ctx.set_output(0, *x);
      return Status::ok();
    }
  }
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const int64_t rank = x->rank();
  ODB_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_dims(ctx, axes, rank));

  Shape keep_shape, out_shape;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const bool r = reduced[static_cast<size_t>(d)];
    keep_shape.push_back(r ? 1 : x->dim(d));
    if (r) count *= x->dim(d);
    if (!r || keepdims) out_shape.push_back(keep_shape.back());
  }
  // Offset into the output of every input element: output strides, 0 on reduced dims.
  std::vector<int64_t> to_out = strides_of(keep_shape);
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[static_cast<size_t>(d)]) to_out[static_cast<size_t>(d)] = 0;

  // Reduced dims that are all the trailing ones (e.g. axes=[-1]): output j reduces the
  // contiguous elements [j * count, (j + 1) * count), visited in the same order as below.
  int64_t first_reduced = rank;
  while (first_reduced > 0 && reduced[static_cast<size_t>(first_reduced - 1)]) --first_reduced;
  bool suffix = true;
  for (int64_t d = 0; d < first_reduced; ++d) suffix = suffix && !reduced[static_cast<size_t>(d)];
  // Calls f(i, j) for every input element i and its output j, in row-major order of i.
  const auto each_element = [&](auto&& f) {
    if (suffix) {
      const int64_t groups = count > 0 ? x->numel() / count : 0;
      for (int64_t j = 0, i = 0; j < groups; ++j)
        for (int64_t t = 0; t < count; ++t, ++i) f(i, static_cast<size_t>(j));
      return;
    }
    for_each_broadcast(x->shape(), {to_out},
                       [&](int64_t i, const int64_t* o) { f(i, static_cast<size_t>(o[0])); });
  };

  return visit_numeric(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    using Op = ReduceOp<K, T>;
    ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make(x->dtype(), out_shape));
    const T* px = x->data<T>();
    const size_t n_out = static_cast<size_t>(out.numel());
    std::vector<double> shift(n_out, 0.0);
    if constexpr (K == ReduceKind::kLogSumExp) {  // first pass: the maximum of each group
      std::fill(shift.begin(), shift.end(), -std::numeric_limits<double>::infinity());
      each_element([&](int64_t i, size_t j) {
        const double v = static_cast<double>(px[i]);
        if (v > shift[j]) shift[j] = v;
      });
    }
    std::vector<typename Op::Acc> acc(n_out, Op::init());
    if (suffix && count > 0) {  // per output, a plain loop over its contiguous group
      for (size_t j = 0; j < n_out; ++j) {
        typename Op::Acc a = acc[j];
        const T* g = px + static_cast<int64_t>(j) * count;
        for (int64_t t = 0; t < count; ++t) a = Op::step(a, g[t], shift[j]);
        acc[j] = a;
      }
    } else {
      each_element([&](int64_t i, size_t j) { acc[j] = Op::step(acc[j], px[i], shift[j]); });
    }
    T* po = out.data<T>();
    for (size_t j = 0; j < n_out; ++j) po[j] = Op::finish(acc[j], count, shift[j]);
    ctx.set_output(0, std::move(out));
    return Status::ok();
  });
}

template <ReduceKind K, AxesFrom kAxes>
Status reduce_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  return reduce_tensor<K, kAxes>(ctx, x);
}

/// ReduceMax-20/ReduceMin-20: as reduce_kernel, also for bool inputs (max is "any", min is "all";
/// an empty group gives false for max and true for min), reduced as uint8 0/1.
template <ReduceKind K>
Status reduce_kernel_with_bool(KernelContext& ctx) {
  static_assert(K == ReduceKind::kMax || K == ReduceKind::kMin);
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->dtype() != DType::kBool) return reduce_tensor<K, AxesFrom::kInput>(ctx, x);
  ODB_ASSIGN_OR_RETURN(Tensor bytes, Tensor::make_uninitialized(DType::kUint8, x->shape()));
  const bool* pb = x->data<bool>();
  uint8_t* pu = bytes.data<uint8_t>();
  for (int64_t i = 0; i < x->numel(); ++i) pu[i] = pb[i] ? 1 : 0;
  ODB_RETURN_IF_ERROR((reduce_tensor<K, AxesFrom::kInput>(ctx, &bytes)));
  Tensor& out = ctx.outputs()[0];
  ODB_ASSIGN_OR_RETURN(Tensor result, Tensor::make_uninitialized(DType::kBool, out.shape()));
  const uint8_t* po = out.data<uint8_t>();
  bool* pr = result.data<bool>();
  for (int64_t i = 0; i < out.numel(); ++i) pr[i] = po[i] != 0;
  ctx.set_output(0, std::move(result));
  return Status::ok();
}

/// ArgMax (kMax) or ArgMin: int64 index of the first (or, with select_last_index=1, last) extreme
/// element along `axis` (default 0), keepdims default 1 (ArgMax/ArgMin-1/11/12/13).
template <bool kMax>
Status arg_reduce_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t rank = x->rank();
  ODB_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx.attr_int("axis", 0), rank));
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const bool last = ctx.attr_int("select_last_index", 0) != 0;
  if (rank == 0) return model_error(ctx.describe() + " needs an input of rank >= 1");
  if (x->dim(axis) == 0)
    return model_error(ctx.describe() + ": axis " + std::to_string(axis) + " has size 0");
  int64_t outer = 1, len = x->dim(axis), inner = 1;
  Shape out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= x->dim(d);
    if (d > axis) inner *= x->dim(d);
    if (d != axis)
      out_shape.push_back(x->dim(d));
    else if (keepdims)
      out_shape.push_back(1);
  }
  return visit_numeric(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make(DType::kInt64, out_shape));
    const T* px = x->data<T>();
    int64_t* po = out.data<int64_t>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < inner; ++in) {
        const T* row = px + o * len * inner + in;
        int64_t best = 0;
        for (int64_t k = 1; k < len; ++k) {
          const T v = row[k * inner], b = row[best * inner];
          const bool better = kMax ? (v > b || (last && v == b)) : (v < b || (last && v == b));
          if (better) best = k;
        }
        po[o * inner + in] = best;
      }
    }
    ctx.set_output(0, std::move(out));
    return Status::ok();
  });
}

}  // namespace onnxdbg::reference
