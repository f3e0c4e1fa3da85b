// MaxPool (ONNX MaxPool-1, -8, -10, -11, -12): N-D max pooling with strides, pads/auto_pad,
// dilations and ceil_mode, and the optional Indices output (flat input indices, row- or
// column-major within a plane as storage_order says).
#include <cmath>
#include <limits>
#include <vector>

#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/pool_common.h"

namespace onnxdbg::reference {
namespace {

// Whether v replaces best as the window's maximum: the first value, a larger one, or the first
// NaN (which then stays).
// Bitwise, not short-circuit, so that the 2-D loop below compiles to selects: on real data the
// comparison is a coin toss that a branch would mispredict half the time.
template <class T>
bool better_max(T v, T best, bool first) {
  bool better = first | (v > best);
  if constexpr (std::is_floating_point_v<T>)
    better = better | (std::isnan(v) > std::isnan(best));  // v NaN, best not
  return better;
}

// 2-D MaxPool without the Indices output, a row of outputs at a time: each valid tap (i, j) in
// row-major order is folded into every output of the row it reaches, so the inner loop runs
// over output columns without branches. Each output sees its valid taps in the same order as
// the general path; starting from the lowest value instead of the first tap gives the same
// result (v > lowest, or v equals it, or v is a NaN that the first-NaN rule takes anyway).
// Windows with no valid tap give 0, as in the general path.
template <class T>
void max_pool_2d(const T* px, T* py, int64_t planes, const SpatialGeometry& g) {
  const int64_t h = g.in[0], w = g.in[1], oh = g.out[0], ow = g.out[1];
  const int64_t kh = g.kernel[0], kw = g.kernel[1], sh = g.strides[0], sw = g.strides[1];
  const int64_t dh = g.dilations[0], dw = g.dilations[1], ph = g.pads_begin[0],
                pw = g.pads_begin[1];
  const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::lowest();
  // Output columns [lo[j], hi[j]) read a valid input column for kernel column j.
  std::vector<int64_t> lo(static_cast<size_t>(kw)), hi(static_cast<size_t>(kw));
  std::vector<char> column_has_tap(static_cast<size_t>(ow), 0);
  for (int64_t j = 0; j < kw; ++j) {
    const int64_t off = j * dw - pw;
    const int64_t l = off >= 0 ? 0 : std::min(ow, (-off + sw - 1) / sw);
    const int64_t u = std::max(l, w - 1 - off < 0 ? 0 : std::min(ow, (w - 1 - off) / sw + 1));
    lo[static_cast<size_t>(j)] = l;
    hi[static_cast<size_t>(j)] = u;
    for (int64_t c = l; c < u; ++c) column_has_tap[static_cast<size_t>(c)] = 1;
  }
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T* xp = px + pl * h * w;
    T* yp = py + pl * oh * ow;
    for (int64_t r = 0; r < oh; ++r) {
      T* yrow = yp + r * ow;
      std::fill(yrow, yrow + ow, lowest);
      bool row_has_tap = false;
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t y = r * sh - ph + i * dh;
        if (y < 0 || y >= h) continue;
        row_has_tap = true;
        const T* row = xp + y * w;
        for (int64_t j = 0; j < kw; ++j) {
          const T* xs = row + (j * dw - pw);
          for (int64_t c = lo[static_cast<size_t>(j)]; c < hi[static_cast<size_t>(j)]; ++c) {
            const T v = xs[c * sw];
            yrow[c] = better_max(v, yrow[c], false) ? v : yrow[c];
          }
        }
      }
      for (int64_t c = 0; c < ow; ++c)
        if (!row_has_tap || !column_has_tap[static_cast<size_t>(c)]) yrow[c] = T(0);
    }
  }
}

template <class T>
Status max_pool_typed(KernelContext& ctx, const Tensor& x, const Shape& kernel) {
  ODB_ASSIGN_OR_RETURN(PoolSetup ps, pool_setup(ctx, x, kernel));
  const bool column_major = ctx.attr_int("storage_order", 0) != 0;
  const bool want_indices = ctx.output_requested(1);
  if (!want_indices && ps.in_spatial.size() == 2) {
    ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make_uninitialized(x.dtype(), ps.out_shape));
    max_pool_2d<T>(x.data<T>(), y.data<T>(), ps.planes, ps.g);
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), ps.out_shape));
  Tensor indices;
  if (want_indices) {
    ODB_ASSIGN_OR_RETURN(indices, Tensor::make(DType::kInt64, ps.out_shape));
  }
  const T* px = x.data<T>();
  T* py = y.data<T>();
  int64_t* pi = want_indices ? indices.data<int64_t>() : nullptr;
  // Column-major offset of a row-major spatial offset (storage_order = 1).
  const Shape& in_spatial = ps.in_spatial;
  auto to_column_major = [&](int64_t off) {
    int64_t result = 0, scale = 1;
    for (size_t d = 0; d < in_spatial.size(); ++d) {
      int64_t stride = 1;
      for (size_t e = d + 1; e < in_spatial.size(); ++e) stride *= in_spatial[e];
      const int64_t coord = (off / stride) % in_spatial[d];
      result += coord * scale;
      scale *= in_spatial[d];
    }
    return result;
  };
  for_each_pool_window(ps, [&](const PoolWindow& w) {
    const T* xp = px + w.in_base;
    T best = T(0);
    int64_t arg = -1;
    for (int64_t q = 0; q < w.count; ++q) {
      const int64_t off = w.offsets[q];
      const T v = xp[off];
      if (better_max(v, best, arg < 0)) {
        best = v;
        arg = off;
      }
    }
    py[w.out] = best;
    if (pi) pi[w.out] = arg < 0 ? -1 : w.in_base + (column_major ? to_column_major(arg) : arg);
  });
  ctx.set_output(0, std::move(y));
  if (want_indices) ctx.set_output(1, std::move(indices));
  return Status::ok();
}

Status max_pool(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(Shape kernel, read_pool_kernel(ctx, *x));
  return visit_numeric(x->dtype(), "MaxPool",
                       [&](auto tag) { return max_pool_typed<decltype(tag)>(ctx, *x, kernel); });
}

}  // namespace

void register_max_pool(KernelRegistry& r) {
  for (int v : {1, 8, 10, 11}) r.add("MaxPool", v, max_pool);
  r.add("MaxPool", 12, max_pool).through(22);
}

}  // namespace onnxdbg::reference
