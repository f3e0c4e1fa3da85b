// Conv (ONNX Conv-1, Conv-11): N-D convolution with groups, strides, dilations, pads/auto_pad and
// an optional bias, computed per group as im2col followed by one BLAS GEMM (W_g x col); grouped 1-D
// and 2-D convolutions with one input channel per group (depthwise) run as direct loops instead.
// float16 1-D and 2-D convolutions run on their float16 operands (conv_direct.h).
#include <algorithm>
#include <memory>
#include <vector>

#include "core/run_limits.h"
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/blas.h"
#include "reference/ops/conv_common.h"
#include "reference/ops/conv_direct.h"
#include "reference/parallel.h"

namespace onnxdbg::reference {
namespace {

// Upper bound on the im2col buffer, in elements; larger outputs are processed in row bands.
constexpr int64_t kMaxColElements = int64_t{1} << 23;
// GEMM tiles (see conv_typed): output columns per band and output channels per row block. Large
// enough that BLAS runs near full speed on each, small enough that 2 to 16 threads share out
// the layers of a typical CNN.
constexpr int64_t kConvBandColumns = 8192;
constexpr int64_t kConvRowBlock = 64;

// y[q] += a * x[q * s] for q in [0, n); the rows never overlap, which __restrict tells the
// compiler so that it vectorises without run-time overlap checks. Each element gets one multiply
// and one add (AVX2 has no FMA and GCC contracts nothing without -mfma), so the AVX2 clone and
// the baseline give the same bits.
#define ODB_AXPY_ROWS(T)                                                                          \
  [[gnu::target_clones("avx2", "default")]] void axpy_row(T* __restrict y, const T* __restrict x, \
                                                          T a, int64_t n) {                       \
    for (int64_t q = 0; q < n; ++q) y[q] += a * x[q];                                             \
  }                                                                                               \
  [[gnu::target_clones("avx2", "default")]] void axpy_row_strided(                                \
      T* __restrict y, const T* __restrict x, T a, int64_t n, int64_t s) {                        \
    for (int64_t q = 0; q < n; ++q) y[q] += a * x[q * s];                                         \
  }
ODB_AXPY_ROWS(float)
ODB_AXPY_ROWS(double)
#undef ODB_AXPY_ROWS

// Depthwise 2-D convolution (one input channel per group, `mg` output channels per group): each
// output element is the sum over kernel taps in row-major (kh, kw) order of w * x, skipping taps
// that fall into the padding, plus the bias. Rows are accumulated tap by tap so that the inner
// loop is a contiguous multiply-add the compiler vectorises; the order of additions for each
// element is the same whatever the shapes, so results are deterministic.
template <class T>
void depthwise_2d(const T* x, const T* w, const T* bias, T* y, int64_t n, int64_t c, int64_t mg,
                  int64_t h, int64_t wd, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh,
                  int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw) {
  // Valid output column range [lo, hi) for each kernel column: 0 <= ow * sw + off < wd.
  std::vector<int64_t> lo(static_cast<size_t>(kw)), hi(static_cast<size_t>(kw));
  for (int64_t j = 0; j < kw; ++j) {
    const int64_t off = j * dw - pw;
    lo[static_cast<size_t>(j)] = off >= 0 ? 0 : std::min(ow, (-off + sw - 1) / sw);
    hi[static_cast<size_t>(j)] = wd - 1 - off < 0 ? 0 : std::min(ow, (wd - 1 - off) / sw + 1);
  }
  // One task per (image, input channel) plane; they write disjoint output channels.
  parallel_for(n * c, [&](int64_t plane) {
    const int64_t b = plane / c, ci = plane % c;
    const T* xc = x + (b * c + ci) * h * wd;
    for (int64_t mi = 0; mi < mg; ++mi) {
      const int64_t co = ci * mg + mi;
      const T* wc = w + co * kh * kw;
      T* yc = y + (b * c * mg + co) * oh * ow;
      for (int64_t r = 0; r < oh; ++r) {
        if (run_should_stop()) return;  // the interpreter fails the node
        T* yrow = yc + r * ow;
        std::fill(yrow, yrow + ow, T(0));
        for (int64_t i = 0; i < kh; ++i) {
          const int64_t ih = r * sh - ph + i * dh;
          if (ih < 0 || ih >= h) continue;
          const T* xrow = xc + ih * wd;
          for (int64_t j = 0; j < kw; ++j) {
            const T wv = wc[i * kw + j];
            const int64_t off = j * dw - pw, l = lo[static_cast<size_t>(j)],
                          u = hi[static_cast<size_t>(j)];
            if (u <= l) continue;
            if (sw == 1) {
              axpy_row(yrow + l, xrow + off + l, wv, u - l);
            } else {
              axpy_row_strided(yrow + l, xrow + l * sw + off, wv, u - l, sw);
            }
          }
        }
        if (bias) {
          const T bv = bias[co];
          for (int64_t q = 0; q < ow; ++q) yrow[q] += bv;
        }
      }
    }
  });
}

// A Conv node's operands checked against each other, with its geometry and output shape.
struct ConvSetup {
  int64_t group = 1;
  SpatialGeometry g;
  Shape out_shape;
};

// Checks group, W's channels, kernel_shape and B against X and reads the geometry. Errors:
// kModelError naming the node and the shapes.
Expected<ConvSetup> conv_setup(KernelContext& ctx, const Tensor& x, const Tensor& w,
                               const Tensor* bias) {
  const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0);
  ConvSetup s;
  s.group = ctx.attr_int("group", 1);
  const int64_t group = s.group;
  const std::string shapes = " (X " + shape_to_string(x.shape()) + ", W " +
                             shape_to_string(w.shape()) + ", group " + std::to_string(group) + ")";
  if (group < 1 || c % group != 0 || m % group != 0)
    return model_error(ctx.describe() +
                       ": input channels and output channels must both be "
                       "divisible by group" +
                       shapes);
  if (w.dim(1) != c / group)
    return model_error(
        ctx.describe() + ": W has " + std::to_string(w.dim(1)) +
        " input channels per group, expected C / group = " + std::to_string(c / group) + shapes);
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel)
    return model_error(ctx.describe() + ": kernel_shape " +
                       ints_to_string(ctx.attr_ints("kernel_shape")) +
                       " does not match the weights" + shapes);
  if (bias && (bias->rank() != 1 || bias->dim(0) != m))
    return model_error(ctx.describe() + ": bias B has shape " + shape_to_string(bias->shape()) +
                       ", expected [" + std::to_string(m) + "]" + shapes);
  if (bias && bias->dtype() != x.dtype())
    return model_error(ctx.describe() + ": bias B is " + std::string(dtype_name(bias->dtype())) +
                       " but X is " + std::string(dtype_name(x.dtype())));
  Shape in_spatial(x.shape().begin() + 2, x.shape().end());
  ODB_ASSIGN_OR_RETURN(s.g, forward_geometry(ctx, in_spatial, kernel, false));
  s.out_shape = {n, m};
  s.out_shape.insert(s.out_shape.end(), s.g.out.begin(), s.g.out.end());
  return s;
}

template <class T>
Status conv_typed(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias) {
  ODB_ASSIGN_OR_RETURN(const ConvSetup s, conv_setup(ctx, x, w, bias));
  // Every element is written by conv_forward (by GEMM with beta 0 or the depthwise loops).
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make_uninitialized(x.dtype(), s.out_shape));
  ODB_RETURN_IF_ERROR(conv_forward<T>(x.data<T>(), w.data<T>(), bias ? bias->data<T>() : nullptr,
                                      y.data<T>(), x.dim(0), x.dim(1), w.dim(0), s.group, s.g));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// float16 Conv (HalfMode::kNativeFloat16 hands it over as it is; bfloat16 arrives as float32): 1-D
// and 2-D convolutions run directly on the float16 operands (conv_direct.h); the others as the
// interpreter runs half-precision kernels, on float32 copies of the operands with the result
// rounded once to float16.
Status conv_half(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias) {
  ODB_ASSIGN_OR_RETURN(const ConvSetup s, conv_setup(ctx, x, w, bias));
  if (conv_direct_applies(s.g, x.dim(1), s.group)) {
    ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make_uninitialized(x.dtype(), s.out_shape));
    ODB_RETURN_IF_ERROR(conv_direct_float16(x, w, bias, s.group, s.g, y));
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  ODB_ASSIGN_OR_RETURN(const Tensor xf, cast_tensor(x, DType::kFloat));
  ODB_ASSIGN_OR_RETURN(const Tensor wf, cast_tensor(w, DType::kFloat));
  Tensor bf;
  if (bias) {
    ODB_ASSIGN_OR_RETURN(bf, cast_tensor(*bias, DType::kFloat));
  }
  ODB_ASSIGN_OR_RETURN(Tensor yf, Tensor::make_uninitialized(DType::kFloat, s.out_shape));
  ODB_RETURN_IF_ERROR(conv_forward<float>(xf.data<float>(), wf.data<float>(),
                                          bias ? bf.data<float>() : nullptr, yf.data<float>(),
                                          x.dim(0), x.dim(1), w.dim(0), s.group, s.g));
  ODB_ASSIGN_OR_RETURN(Tensor y, cast_tensor(yf, x.dtype()));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

template <class T>
Status conv_forward(const T* px, const T* pw, const T* pb, T* py, int64_t n, int64_t c, int64_t m,
                    int64_t group, const SpatialGeometry& g) {
  const int64_t nd = static_cast<int64_t>(g.in.size());
  const Shape& in_spatial = g.in;
  const Shape& kernel = g.kernel;
  const int64_t cg = c / group, mg = m / group, in_size = product(in_spatial);
  const int64_t k = cg * product(kernel), p = product(g.out);
  const int64_t out_last = g.out[static_cast<size_t>(nd - 1)],
                outer = p / std::max<int64_t>(out_last, 1);

  if (cg == 1 && group > 1 && nd <= 2 && p > 0) {
    // Only grouped convs: with one group and one input channel (an STFT as a 1-D conv, say) the
    // kernel is long and the output channels many, which GEMM does better. 1-D runs as 2-D with a
    // height of 1.
    const auto at = [&](const std::vector<int64_t>& v, int64_t d, int64_t def) {
      return nd == 2 ? v[static_cast<size_t>(d)] : (d == 0 ? def : v[0]);
    };
    depthwise_2d<T>(px, pw, pb, py, n, c, mg, at(in_spatial, 0, 1), at(in_spatial, 1, 1),
                    at(kernel, 0, 1), at(kernel, 1, 1), at(g.out, 0, 1), at(g.out, 1, 1),
                    at(g.strides, 0, 1), at(g.strides, 1, 1), at(g.dilations, 0, 1),
                    at(g.dilations, 1, 1), at(g.pads_begin, 0, 0), at(g.pads_begin, 1, 0));
    return Status::ok();
  }

  bool pointwise = product(kernel) == 1;
  for (int64_t d = 0; d < nd; ++d) {
    const auto du = static_cast<size_t>(d);
    pointwise = pointwise && g.strides[du] == 1 && g.pads_begin[du] == 0 && g.pads_end[du] == 0;
  }
  // The work of each (image, group) is cut into GEMM tiles fixed by the shapes alone
  // (parallel.h): with an im2col buffer too large for one piece or worth filling in parallel,
  // bands of output rows of about kConvBandColumns columns, each with its own im2col; else one
  // im2col (none for a pointwise conv, which reads X) and tiles of kConvBandColumns columns or,
  // when there is one such tile, kConvRowBlock output channels. Each output element comes from
  // exactly one GEMM call whose operands do not depend on the thread count, so neither do its bits.
  const int64_t band_limit =
      std::max<int64_t>(1, kMaxColElements / std::max<int64_t>(1, k * out_last));
  const int64_t band = std::clamp<int64_t>(
      (kConvBandColumns + out_last - 1) / std::max<int64_t>(out_last, 1), 1, band_limit);
  const int64_t bands = outer > 0 ? (outer + band - 1) / band : 0;
  const int64_t col_tiles = (p + kConvBandColumns - 1) / kConvBandColumns;
  const int64_t row_tiles = col_tiles > 1 ? 1 : (mg + kConvRowBlock - 1) / kConvRowBlock;
  const int64_t tile_rows = row_tiles > 1 ? kConvRowBlock : mg;
  // The bias is the GEMM's starting C (beta 1): BLAS scales or clears C before accumulating
  // anyway, so this saves a separate pass adding it afterwards.
  const T beta = pb ? T(1) : T(0);
  // C = W[r0 : r0 + rows] x src[:, c0 : c0 + cols] (+ bias), src of leading dimension ld.
  const auto tile = [&](const T* wg, const T* src, int64_t ld, T* yg, const T* bg, int64_t r0,
                        int64_t rows, int64_t c0, int64_t cols) {
    if (bg)
      for (int64_t r = r0; r < r0 + rows; ++r) std::fill_n(yg + r * p + c0, cols, bg[r]);
    return gemm<T>(false, false, rows, cols, k, T(1), wg + r0 * k, k, src, ld, beta,
                   yg + r0 * p + c0, p);
  };
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t gi = 0; gi < group; ++gi) {
      if (p == 0) continue;
      const T* xg = px + (b * c + gi * cg) * in_size;
      const T* wg = pw + gi * mg * k;
      const T* bg = pb ? pb + gi * mg : nullptr;
      T* yg = py + (b * m + gi * mg) * p;
      if (!pointwise && bands > 1) {
        ODB_RETURN_IF_ERROR(parallel_for_status(bands, [&](int64_t bi) {
          ODB_RETURN_IF_ERROR(check_run_limits());
          const int64_t o0 = bi * band, o1 = std::min(outer, o0 + band);
          const int64_t cols = (o1 - o0) * out_last;
          T* col = thread_scratch<T>(static_cast<size_t>(k * band * out_last));
          im2col(xg, cg, g, o0, o1, col);
          return tile(wg, col, cols, yg, bg, 0, mg, o0 * out_last, cols);
        }));
        continue;
      }
      const T* src = xg;
      if (!pointwise) {
        T* col = thread_scratch<T>(static_cast<size_t>(k * p));
        im2col(xg, cg, g, 0, outer, col);
        src = col;
      }
      ODB_RETURN_IF_ERROR(parallel_for_status(col_tiles * row_tiles, [&](int64_t t) {
        ODB_RETURN_IF_ERROR(check_run_limits());
        const int64_t c0 = (t / row_tiles) * kConvBandColumns, r0 = (t % row_tiles) * tile_rows;
        return tile(wg, src + c0, p, yg, bg, r0, std::min(tile_rows, mg - r0), c0,
                    std::min(kConvBandColumns, p - c0));
      }));
    }
  }
  return Status::ok();
}

template Status conv_forward<float>(const float*, const float*, const float*, float*, int64_t,
                                    int64_t, int64_t, int64_t, const SpatialGeometry&);
template Status conv_forward<double>(const double*, const double*, const double*, double*, int64_t,
                                     int64_t, int64_t, int64_t, const SpatialGeometry&);

namespace {

Status conv(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* w, ctx.required_input(1));
  const Tensor* bias = ctx.input(2);
  ODB_RETURN_IF_ERROR(check_conv_operands(ctx, *x, *w));
  if (x->dtype() == DType::kFloat16) return conv_half(ctx, *x, *w, bias);
  return visit_float(x->dtype(), "Conv",
                     [&](auto tag) { return conv_typed<decltype(tag)>(ctx, *x, *w, bias); });
}

}  // namespace

void register_conv(KernelRegistry& r) {
  r.add("Conv", 1, conv, HalfMode::kNativeFloat16).accumulates_in_double();
  r.add("Conv", 11, conv, HalfMode::kNativeFloat16).accumulates_in_double().through(22);
}

}  // namespace onnxdbg::reference
