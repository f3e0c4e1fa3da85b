// Helpers shared by reference kernels: ONNX multidirectional broadcasting ("Broadcasting in
// ONNX", numpy rules), axis normalisation, dtype dispatch, and reading shape-like inputs.
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "reference/kernel.h"
#include "reference/parallel.h"

namespace onnxdbg::reference {

/// Row-major strides (in elements) of `shape`.
std::vector<int64_t> strides_of(const Shape& shape);

/// Broadcast result of `shapes` (numpy rules). Errors: kModelError naming both shapes when a pair
/// of dims is neither equal nor 1.
Expected<Shape> broadcast_shapes(const std::vector<Shape>& shapes);

/// broadcast_shapes of two shapes, without building a vector of them (the binary ops' case).
Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b);

/// Strides of `in` seen through the broadcast `out` shape: aligned to the right, 0 on broadcast
/// dims. Length equals out.size().
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

/// Calls f(out_index, offsets) for every element of `out` in row-major order, where offsets[k] is
/// the flat offset into input k (whose broadcast strides are strides[k]).
template <class F>
void for_each_broadcast(const Shape& out, const std::vector<std::vector<int64_t>>& strides, F&& f) {
  const size_t rank = out.size(), k = strides.size();
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  if (n == 0) return;
  std::vector<int64_t> idx(rank, 0), offs(k, 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, offs.data());
    for (size_t d = rank; d-- > 0;) {
      ++idx[d];
      for (size_t j = 0; j < k; ++j) offs[j] += strides[j][d];
      if (idx[d] < out[d]) break;
      for (size_t j = 0; j < k; ++j) offs[j] -= strides[j][d] * idx[d];
      idx[d] = 0;
    }
  }
}

/// The runs of for_each_broadcast_run: `out` with dims of size 1 dropped and adjacent dims that
/// every input walks contiguously merged, innermost first, with each input's stride per dim.
struct BroadcastRuns {
  BroadcastRuns(const Shape& out, const std::vector<std::vector<int64_t>>& strides);

  /// Calls f(out_begin, offsets, length, steps) for the runs (or the parts of runs) covering the
  /// output elements [begin, end), in order; see for_each_broadcast_run.
  template <class F>
  void for_range(int64_t begin, int64_t end, F&& f) const {
    if (begin >= end) return;
    const size_t k = st.size(), nd = dims.size();
    const int64_t len = dims[0];
    std::vector<int64_t> offs(k, 0), idx(nd, 0);
    // Unravel `begin` over the collapsed dims.
    int64_t rest = begin;
    for (size_t d = 0; d < nd; ++d) {
      idx[d] = rest % dims[d];
      rest /= dims[d];
      for (size_t j = 0; j < k; ++j) offs[j] += st[j][d] * idx[d];
    }
    int64_t i = begin;
    while (i < end) {
      const int64_t run = std::min(len - idx[0], end - i);
      f(i, offs.data(), run, steps.data());
      i += run;
      if (i >= end) break;
      // idx[0] reaches len here: step to the start of the next run.
      for (size_t j = 0; j < k; ++j) offs[j] -= st[j][0] * idx[0];
      idx[0] = 0;
      for (size_t d = 1; d < nd; ++d) {
        ++idx[d];
        for (size_t j = 0; j < k; ++j) offs[j] += st[j][d];
        if (idx[d] < dims[d]) break;
        for (size_t j = 0; j < k; ++j) offs[j] -= st[j][d] * idx[d];
        idx[d] = 0;
      }
    }
  }

  int64_t numel = 0;                     ///< elements of `out`
  std::vector<int64_t> dims;             ///< collapsed dims, innermost first (at least one)
  std::vector<std::vector<int64_t>> st;  ///< st[k][d]: input k's stride along dims[d]
  std::vector<int64_t> steps;            ///< st[k][0] for each input k
};

/// As for_each_broadcast, but one call per run of the innermost dims that every input walks with a
/// constant step: f(out_begin, offsets, length, steps) stands for the elements out_begin + j,
/// j in [0, length), of which input k's is at offsets[k] + j * steps[k]. Dims of size 1 are
/// dropped and adjacent dims that every input walks contiguously are merged first, so e.g. a
/// per-channel operand of an N x C x H x W tensor gives runs of H * W with step 0.
template <class F>
void for_each_broadcast_run(const Shape& out, const std::vector<std::vector<int64_t>>& strides,
                            F&& f) {
  BroadcastRuns runs(out, strides);
  runs.for_range(0, runs.numel, f);
}

/// As for_each_broadcast_run, with the output cut into chunks of kElementwiseGrain elements run
/// on the interpreter's threads (parallel_range; a run crossing a chunk boundary is split there).
/// f is called from several threads at once and must only write the elements it is given.
template <class F>
void parallel_for_each_broadcast_run(const Shape& out,
                                     const std::vector<std::vector<int64_t>>& strides, F&& f) {
  BroadcastRuns runs(out, strides);
  parallel_range(runs.numel, kElementwiseGrain,
                 [&](int64_t b, int64_t e) { runs.for_range(b, e, f); });
}

/// y[j] = f(a[j * sa], b[j * sb]) for j in [0, n): one run of broadcast_binary, its pointers
/// __restrict (a and b may be the same; y is another buffer) and f its own copy, not inlined
/// into the chunk's std::function, so that the loops vectorise (see map_range). The stride-1 and
/// stride-0 cases get loops of their own.
template <class TA, class TB, class TOut, class F>
[[gnu::noinline]] void binary_run(const TA* __restrict a, int64_t sa, const TB* __restrict b,
                                  int64_t sb, TOut* __restrict y, int64_t n, const F f) {
  if (sa == 1 && sb == 0) {
    const TB vb = *b;
    for (int64_t j = 0; j < n; ++j) y[j] = f(a[j], vb);
  } else if (sa == 0 && sb == 1) {
    const TA va = *a;
    for (int64_t j = 0; j < n; ++j) y[j] = f(va, b[j]);
  } else if (sa == 1 && sb == 1) {
    for (int64_t j = 0; j < n; ++j) y[j] = f(a[j], b[j]);
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = f(a[j * sa], b[j * sb]);
  }
}

/// out[i] = f(a[ia], b[ib]) with broadcasting; TOut decides the output dtype. Equal shapes, a
/// scalar operand and per-channel operands run as flat loops (see for_each_broadcast_run), in
/// chunks on the interpreter's threads: f is called from several threads at once.
template <class TA, class TB, class TOut, class F>
Expected<Tensor> broadcast_binary(const Tensor& a, const Tensor& b, F&& f) {
  ODB_ASSIGN_OR_RETURN(Shape out_shape, broadcast_shapes(a.shape(), b.shape()));
  ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make_uninitialized(DTypeOf<TOut>::value, out_shape));
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TOut* po = out.data<TOut>();
  if (a.shape() == b.shape()) {
    parallel_range(out.numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      binary_run(pa + lo, 1, pb + lo, 1, po + lo, hi - lo, f);
    });
    return out;
  }
  parallel_for_each_broadcast_run(
      out_shape, {broadcast_strides(a.shape(), out_shape), broadcast_strides(b.shape(), out_shape)},
      [&](int64_t i, const int64_t* o, int64_t len, const int64_t* st) {
        binary_run(pa + o[0], st[0], pb + o[1], st[1], po + i, len, f);
      });
  return out;
}

/// Normalises a possibly negative axis into [0, rank). Errors: kModelError when out of range.
Expected<int64_t> normalize_axis(int64_t axis, int64_t rank, const std::string& what = "axis");

/// Reads a 1-D (or scalar) int64/int32 tensor, e.g. a shape, axes, pads or repeats input.
/// Errors: kModelError for other dtypes.
Expected<std::vector<int64_t>> to_int64_vector(const Tensor& t);

/// Who an error of the visit_* functions names: a string, or a node (KernelContext::describe(),
/// built only when there is an error to report, not on every run of the kernel).
class OpName {
 public:
  OpName(const std::string& text) : text_(&text) {}  // NOLINT(google-explicit-constructor)
  OpName(const char* text) : literal_(text) {}       // NOLINT(google-explicit-constructor)
  OpName(const KernelContext& ctx) : ctx_(&ctx) {}   // NOLINT(google-explicit-constructor)
  std::string str() const {
    return ctx_ ? ctx_->describe() : text_ ? *text_ : std::string(literal_ ? literal_ : "");
  }

 private:
  const std::string* text_ = nullptr;
  const char* literal_ = nullptr;
  const KernelContext* ctx_ = nullptr;
};

/// Calls f(T{}) with T the C++ type of `t`; errors with kUnsupported naming `op` for other types.
/// Float types: float, double (float16/bfloat16 arrive as float32 in HalfMode::kViaFloat32).
template <class F>
Status visit_float(DType t, const OpName& op, F&& f) {
  switch (t) {
    case DType::kFloat:
      return f(float{});
    case DType::kDouble:
      return f(double{});
    default:
      return unsupported(op.str() + " does not support element type " + std::string(dtype_name(t)));
  }
}

/// Numeric types: float, double, and the signed and unsigned integers.
template <class F>
Status visit_numeric(DType t, const OpName& op, F&& f) {
  switch (t) {
    case DType::kFloat:
      return f(float{});
    case DType::kDouble:
      return f(double{});
    case DType::kInt8:
      return f(int8_t{});
    case DType::kInt16:
      return f(int16_t{});
    case DType::kInt32:
      return f(int32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kUint8:
      return f(uint8_t{});
    case DType::kUint16:
      return f(uint16_t{});
    case DType::kUint32:
      return f(uint32_t{});
    case DType::kUint64:
      return f(uint64_t{});
    default:
      return unsupported(op.str() + " does not support element type " + std::string(dtype_name(t)));
  }
}

/// Every fixed-size type, including bool, float16 and bfloat16 as opaque values (for ops that
/// move data without arithmetic: Transpose, Gather, Concat, ...). Strings are handled apart.
template <class F>
Status visit_all(DType t, const OpName& op, F&& f) {
  switch (t) {
    case DType::kBool:
      return f(bool{});
    case DType::kFloat16:
      return f(Float16{});
    case DType::kBFloat16:
      return f(BFloat16{});
    case DType::kString:
      return f(std::string{});
    default:
      return visit_numeric(t, op, std::forward<F>(f));
  }
}

/// Copies elements of a tensor of any dtype (strings included) from src[i] to dst[j]: for
/// data-movement kernels. `dst` must have the same dtype as `src`.
void copy_element(const Tensor& src, int64_t i, Tensor& dst, int64_t j);

/// Input i (`x`, already read by the kernel) with another shape of equal element count: the
/// buffer is moved when the interpreter offers the input (KernelContext::movable_input), copied
/// otherwise. Errors: kInvalidArgument when the element counts differ.
inline Expected<Tensor> reshaped_input(KernelContext& ctx, size_t i, const Tensor& x, Shape shape) {
  if (Tensor* m = ctx.movable_input(i)) return std::move(*m).reshaped(std::move(shape));
  return x.reshaped(std::move(shape));
}

}  // namespace onnxdbg::reference
