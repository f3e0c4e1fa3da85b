// Window enumeration shared by the pooling kernels (MaxPool, AveragePool, LpPool): for each output
// position, the flat offsets of the input positions its window covers, computed once per spatial
// geometry and reused for every (batch, channel) plane.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/run_limits.h"
#include "reference/ops/conv_common.h"

namespace onnxdbg::reference {

/// Windows of output positions [begin, end) in CSR form: position begin + j covers the input
/// offsets offsets[row_ptr[j] .. row_ptr[j+1]) (row-major within one plane, padding excluded).
/// padded_count[j] counts the window's positions inside the padded input (count_include_pad).
struct WindowChunk {
  int64_t begin = 0, end = 0;
  std::vector<int64_t> row_ptr, offsets, padded_count;
};

/// Calls f(const WindowChunk&) for consecutive chunks covering every output position of `g`.
/// Stops early, leaving positions out, when the run must stop (run_should_stop, polled once per
/// 256 positions); the interpreter then fails the node.
template <class F>
void for_each_window_chunk(const SpatialGeometry& g, F&& f) {
  const size_t nd = g.in.size();
  const int64_t total = product(g.out), kn = product(g.kernel);
  const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(1, kn));
  std::vector<int64_t> oidx(nd, 0), cidx(nd, 0);
  std::vector<std::vector<int64_t>> valid(nd);
  WindowChunk wc;
  for (int64_t o0 = 0; o0 < total; o0 += chunk) {
    wc.begin = o0;
    wc.end = std::min(total, o0 + chunk);
    wc.row_ptr.assign(1, 0);
    wc.offsets.clear();
    wc.padded_count.clear();
    for (int64_t o = o0; o < wc.end; ++o) {
      if ((o & 255) == 0 && run_should_stop()) return;
      int64_t padded = 1;
      bool any = true;
      for (size_t d = 0; d < nd; ++d) {
        valid[d].clear();
        int64_t pc = 0;
        const int64_t start = oidx[d] * g.strides[d] - g.pads_begin[d];
        for (int64_t j = 0; j < g.kernel[d]; ++j) {
          const int64_t p = start + j * g.dilations[d];
          if (p >= -g.pads_begin[d] && p < g.in[d] + g.pads_end[d]) ++pc;
          if (p >= 0 && p < g.in[d]) valid[d].push_back(p);
        }
        padded *= pc;
        any = any && !valid[d].empty();
      }
      if (any) {
        std::fill(cidx.begin(), cidx.end(), 0);
        for (;;) {
          int64_t off = 0;
          for (size_t d = 0; d < nd; ++d)
            off = off * g.in[d] + valid[d][static_cast<size_t>(cidx[d])];
          wc.offsets.push_back(off);
          size_t d = nd;
          while (d-- > 0) {
            if (++cidx[d] < static_cast<int64_t>(valid[d].size())) break;
            cidx[d] = 0;
          }
          if (d == static_cast<size_t>(-1)) break;
        }
      }
      wc.padded_count.push_back(padded);
      wc.row_ptr.push_back(static_cast<int64_t>(wc.offsets.size()));
      for (size_t d = nd; d-- > 0;) {
        if (++oidx[d] < g.out[d]) break;
        oidx[d] = 0;
      }
    }
    f(wc);
  }
}

/// Checks X is N x C x D1 x ... and reads kernel_shape (required, one value per spatial dim).
inline Expected<Shape> read_pool_kernel(const KernelContext& ctx, const Tensor& x) {
  if (x.rank() < 3)
    return model_error(ctx.describe() + ": X must be N x C x D1 x ... (rank >= 3), got shape " +
                       shape_to_string(x.shape()));
  if (!ctx.has_attr("kernel_shape"))
    return model_error(ctx.describe() + ": the required attribute kernel_shape is missing");
  Shape kernel = ctx.attr_ints("kernel_shape");
  if (static_cast<int64_t>(kernel.size()) != x.rank() - 2)
    return model_error(ctx.describe() + ": kernel_shape " + ints_to_string(kernel) + " has " +
                       std::to_string(kernel.size()) + " dims but X of shape " +
                       shape_to_string(x.shape()) + " has " + std::to_string(x.rank() - 2) +
                       " spatial dims");
  return kernel;
}

/// What MaxPool, AveragePool and LpPool set up before sliding their windows: the geometry of
/// `kernel` over X's spatial dims (forward_geometry with the node's ceil_mode), Y's shape
/// N x C x out..., and the sizes that index planes (N*C planes of in_size and out_size elements).
struct PoolSetup {
  SpatialGeometry g;
  Shape in_spatial, out_shape;
  int64_t planes = 0, in_size = 0, out_size = 0;
};

/// PoolSetup for X (rank >= 3, checked by read_pool_kernel) and `kernel`. Errors: those of
/// forward_geometry (bad strides, pads, dilations, a kernel larger than the padded input).
inline Expected<PoolSetup> pool_setup(const KernelContext& ctx, const Tensor& x,
                                      const Shape& kernel) {
  PoolSetup s;
  s.in_spatial.assign(x.shape().begin() + 2, x.shape().end());
  ODB_ASSIGN_OR_RETURN(
      s.g, forward_geometry(ctx, s.in_spatial, kernel, ctx.attr_int("ceil_mode", 0) != 0));
  s.out_shape = {x.dim(0), x.dim(1)};
  s.out_shape.insert(s.out_shape.end(), s.g.out.begin(), s.g.out.end());
  s.planes = x.dim(0) * x.dim(1);
  s.in_size = product(s.in_spatial);
  s.out_size = product(s.g.out);
  return s;
}

/// One window of for_each_pool_window: output element `out` (flat index into Y), `in_base` the flat
/// index of its plane's first input element, and the in-plane offsets of the `count` input
/// positions it covers (padding excluded); `padded_count` counts its positions inside the padded
/// input (AveragePool's count_include_pad).
struct PoolWindow {
  int64_t in_base = 0, out = 0;
  const int64_t* offsets = nullptr;
  int64_t count = 0, padded_count = 0;
};

/// Calls f(const PoolWindow&) for every output position of every plane of `ps`, planes inner
/// (the window offsets are computed once per chunk of positions and reused for each plane).
/// Stops early as for_each_window_chunk does (polled once per plane of a chunk).
template <class F>
void for_each_pool_window(const PoolSetup& ps, F&& f) {
  for_each_window_chunk(ps.g, [&](const WindowChunk& wc) {
    PoolWindow w;
    for (int64_t pl = 0; pl < ps.planes; ++pl) {
      if (run_should_stop()) return;
      w.in_base = pl * ps.in_size;
      for (int64_t o = wc.begin; o < wc.end; ++o) {
        const auto j = static_cast<size_t>(o - wc.begin);
        const int64_t b = wc.row_ptr[j];
        w.out = pl * ps.out_size + o;
        w.offsets = wc.offsets.data() + b;
        w.count = wc.row_ptr[j + 1] - b;
        w.padded_count = wc.padded_count[j];
        f(w);
      }
    }
  });
}

/// Global pooling: y[n, c, 1, ..., 1] = reduce(plane of x[n, c], plane size) for X of shape
/// N x C x D1 x ... (rank >= 2). Errors: kModelError for lower ranks.
template <class T, class R>
Status global_pool(KernelContext& ctx, const Tensor& x, R&& reduce) {
  if (x.rank() < 2)
    return model_error(ctx.describe() + ": X must be N x C x D1 x ..., got shape " +
                       shape_to_string(x.shape()));
  Shape out_shape(x.shape().size(), 1);
  out_shape[0] = x.dim(0);
  out_shape[1] = x.dim(1);
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), out_shape));
  const int64_t planes = x.dim(0) * x.dim(1), size = planes == 0 ? 0 : x.numel() / planes;
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (int64_t pl = 0; pl < planes; ++pl) py[pl] = reduce(px + pl * size, size);
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace onnxdbg::reference
