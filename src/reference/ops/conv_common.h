// Geometry shared by Conv, ConvTranspose and the pooling kernels: reading strides, dilations,
// pads and auto_pad, the output size rules of the ONNX spec (Conv and MaxPool/AveragePool,
// "auto_pad" and "ceil_mode"), and im2col/col2im over any number of spatial dims.
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "reference/kernel.h"

namespace onnxdbg::reference {

/// Sliding-window geometry over the spatial dims of an N x C x D1 x ... x Dk tensor: `in` is what
/// the window slides over, `out` the number of window positions per dim. Position o of dim d
/// reads in[o * strides[d] - pads_begin[d] + j * dilations[d]] for j in [0, kernel[d]).
struct SpatialGeometry {
  Shape in;
  Shape kernel;
  std::vector<int64_t> strides, dilations, pads_begin, pads_end;
  Shape out;
};

/// "[1, 2, 3]": an attribute's values for messages.
inline std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// The product of v's values, saturating at INT64_MAX.
inline int64_t product(const std::vector<int64_t>& v) {
  // kernel_shape is the model's: its product may overflow, and then saturates.
  int64_t p = 1;
  for (int64_t d : v)
    if (__builtin_mul_overflow(p, d, &p)) return std::numeric_limits<int64_t>::max();
  return p;
}

/// Reads `strides` and `dilations` (default 1 per dim) into g; errors with kModelError naming the
/// node when their length is not the number of spatial dims or a value is below 1.
inline Status read_strides_dilations(const KernelContext& ctx, SpatialGeometry& g) {
  const size_t nd = g.kernel.size();
  for (auto [name, dst] :
       {std::pair{"strides", &g.strides}, std::pair{"dilations", &g.dilations}}) {
    *dst = ctx.attr_ints(name, std::vector<int64_t>(nd, 1));
    if (dst->size() != nd)
      return model_error(ctx.describe() + ": " + name + " " + ints_to_string(*dst) + " has " +
                         std::to_string(dst->size()) + " values for " + std::to_string(nd) +
                         " spatial dims");
    for (int64_t v : *dst)
      if (v < 1)
        return model_error(ctx.describe() + ": " + name + " " + ints_to_string(*dst) +
                           " must be positive");
  }
  return Status::ok();
}

/// Reads `pads` (default 0; 2 * spatial dims values, all begins then all ends) into g.
inline Status read_pads(const KernelContext& ctx, SpatialGeometry& g) {
  const size_t nd = g.kernel.size();
  auto pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  if (pads.size() != 2 * nd)
    return model_error(ctx.describe() + ": pads " + ints_to_string(pads) + " has " +
                       std::to_string(pads.size()) + " values, expected " + std::to_string(2 * nd) +
                       " for " + std::to_string(nd) + " spatial dims");
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(nd));
  g.pads_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(nd), pads.end());
  return Status::ok();
}

/// The auto_pad attribute, normalised ("" becomes "NOTSET"). Errors: kModelError for other values.
inline Expected<std::string> read_auto_pad(const KernelContext& ctx) {
  std::string ap = ctx.attr_string("auto_pad", "NOTSET");
  if (ap.empty()) ap = "NOTSET";
  if (ap != "NOTSET" && ap != "SAME_UPPER" && ap != "SAME_LOWER" && ap != "VALID")
    return model_error(ctx.describe() + ": unknown auto_pad '" + ap + "'");
  return ap;
}

/// Window steps (output positions times window positions, per plane) above which a window op is
/// refused before it starts: 2^40, hours of work for one plane, never a real model's.
inline constexpr double kMaxWindowSteps = 0x1p40;

/// Refuses geometry whose work is absurd: more than kMaxWindowSteps output positions times
/// window positions (counted in double, so no product overflows). Errors: kModelError naming the
/// node, kernel_shape and the step count.
inline Status check_window_work(const KernelContext& ctx, const SpatialGeometry& g) {
  double outs = 1, window = 1, sides = 0;
  for (size_t d = 0; d < g.kernel.size(); ++d) {
    outs *= static_cast<double>(g.out[d]);
    window *= static_cast<double>(g.kernel[d]);
    sides += static_cast<double>(g.kernel[d]);
  }
  const double steps = outs * std::max(window, sides);
  if (steps <= kMaxWindowSteps) return Status::ok();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g window steps per plane (limit %.3g)", steps,
                kMaxWindowSteps);
  return model_error(ctx.describe() + ": kernel_shape " + ints_to_string(g.kernel) +
                     " over output positions " + ints_to_string(g.out) + " means " + buf +
                     "; refused before running");
}

/// Geometry of a forward window op (Conv, MaxPool, AveragePool, LpPool) over `in_spatial` with
/// `kernel`: reads strides, dilations, pads and auto_pad, and computes the output size (ONNX
/// Conv/MaxPool spec: explicit pads give floor((in + pads - ((k-1)*d+1)) / s) + 1, ceil with
/// ceil_mode, dropping a last window that would start in the end padding; SAME_* give
/// ceil(in / s) with the padding split lower-half-first for SAME_UPPER; VALID pads nothing).
/// Errors: kModelError naming the node and shapes for bad attributes or an empty output.
inline Expected<SpatialGeometry> forward_geometry(const KernelContext& ctx, const Shape& in_spatial,
                                                  const Shape& kernel, bool ceil_mode) {
  SpatialGeometry g;
  g.in = in_spatial;
  g.kernel = kernel;
  const size_t nd = kernel.size();
  for (int64_t k : kernel)
    if (k < 1)
      return model_error(ctx.describe() + ": kernel shape " + ints_to_string(kernel) +
                         " must be positive");
  ODB_RETURN_IF_ERROR(read_strides_dilations(ctx, g));
  ODB_ASSIGN_OR_RETURN(std::string auto_pad, read_auto_pad(ctx));
  if (auto_pad == "NOTSET") {
    ODB_RETURN_IF_ERROR(read_pads(ctx, g));
  } else {
    g.pads_begin.assign(nd, 0);
    g.pads_end.assign(nd, 0);
  }
  g.out.resize(nd);
  // Attribute values whose arithmetic overflows int64 are refused by name (a hostile model's
  // kernel_shape [2, 2^62] would otherwise slide its window forever, issue 17).
  auto overflow = [&](const char* what) {
    return model_error(ctx.describe() + ": kernel_shape " + ints_to_string(kernel) +
                       " with strides " + ints_to_string(g.strides) + ", dilations " +
                       ints_to_string(g.dilations) + " and pads " + ints_to_string(g.pads_begin) +
                       " + " + ints_to_string(g.pads_end) + " overflows 64-bit integers in " +
                       what + "; refused before running");
  };
  for (size_t d = 0; d < nd; ++d) {
    int64_t ext = 0, sum = 0, span_bound = 0;
    if (__builtin_mul_overflow(kernel[d] - 1, g.dilations[d], &ext) ||
        __builtin_add_overflow(ext, 1, &ext))
      return overflow("the window's extent");
    const int64_t s = g.strides[d];
    // Bounds of every sum below: in + s (SAME's output size), in + ext (SAME's padding), in +
    // pads - ext (explicit padding).
    if (__builtin_add_overflow(in_spatial[d], s, &sum) ||
        __builtin_add_overflow(in_spatial[d], ext, &sum) ||
        __builtin_add_overflow(in_spatial[d], g.pads_begin[d], &sum) ||
        __builtin_add_overflow(sum, g.pads_end[d], &sum) ||
        __builtin_sub_overflow(sum, ext, &span_bound))
      return overflow("the padded input's size");
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[d] = (in_spatial[d] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * s + ext - in_spatial[d]);
      g.pads_begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pads_end[d] = total - g.pads_begin[d];
      continue;
    }
    const int64_t span = in_spatial[d] + g.pads_begin[d] + g.pads_end[d] - ext;
    if (span < 0)
      return model_error(ctx.describe() + ": kernel " + ints_to_string(kernel) +
                         " with dilations " + ints_to_string(g.dilations) +
                         " does not fit the padded input " + ints_to_string(in_spatial) +
                         " (pads " + ints_to_string(g.pads_begin) + " + " +
                         ints_to_string(g.pads_end) + ")");
    g.out[d] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (g.out[d] - 1) * s >= in_spatial[d] + g.pads_begin[d]) --g.out[d];
  }
  ODB_RETURN_IF_ERROR(check_window_work(ctx, g));
  return g;
}

/// The checks Conv and ConvTranspose make of X and W before anything else: X is N x C x D1 x ...
/// (rank >= 3), W has X's rank and dtype. Errors: kModelError naming the node and both shapes.
inline Status check_conv_operands(const KernelContext& ctx, const Tensor& x, const Tensor& w) {
  if (x.rank() < 3)
    return model_error(ctx.describe() + ": X must be N x C x D1 x ... (rank >= 3), got shape " +
                       shape_to_string(x.shape()));
  if (w.rank() != x.rank())
    return model_error(ctx.describe() + ": W has shape " + shape_to_string(w.shape()) +
                       " but X has shape " + shape_to_string(x.shape()) +
                       "; their ranks must be equal");
  if (w.dtype() != x.dtype())
    return model_error(ctx.describe() + ": W is " + std::string(dtype_name(w.dtype())) +
                       " but X is " + std::string(dtype_name(x.dtype())));
  return Status::ok();
}

/// Adds the optional bias B (one value per output channel, ONNX Conv/ConvTranspose input 2) to
/// y, an N x M x P buffer (P spatial positions per channel); does nothing when `bias` is null.
template <class T>
void add_channel_bias(T* y, const Tensor* bias, int64_t n, int64_t m, int64_t p) {
  if (!bias) return;
  const T* pb = bias->data<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t j = 0; j < m; ++j) {
      T* row = y + (b * m + j) * p;
      for (int64_t i = 0; i < p; ++i) row[i] += pb[j];
    }
}

/// The convolution Conv computes once its attributes are read (conv.cpp): y = W * x (+ bias) for
/// x [n, c, g.in...], w [m, c / group, g.kernel...], the optional bias [m] (null for none) and y
/// [n, m, g.out...], all dense row-major; T is float or double. Per (image, group) it runs im2col
/// and BLAS GEMM in tiles fixed by the shapes alone (so its bits do not depend on the thread
/// count), or, for grouped 1-D/2-D convolutions with one input channel per group, a direct loop
/// that adds the taps of each output in row-major kernel order. `group` must divide c and m (the
/// caller checks). Errors: kUnsupported when a GEMM dimension exceeds 32-bit BLAS, and the run
/// limits' error when the run is cancelled or out of time.
template <class T>
Status conv_forward(const T* x, const T* w, const T* bias, T* y, int64_t n, int64_t c, int64_t m,
                    int64_t group, const SpatialGeometry& g);

/// Frees what make_aligned allocated.
struct AlignedFree {
  void operator()(void* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
};
/// An array of trivially destructible T aligned to 64 bytes (a cache line), uninitialised.
template <class T>
using AlignedArray = std::unique_ptr<T[], AlignedFree>;

/// n elements of T (n > 0) at a 64-byte boundary, uninitialised: an AMX tile or AVX-512 load of
/// a row that straddles two cache lines reads both, which made the integer kernels' tile loads
/// 2.8 times slower than from aligned rows. Throws std::bad_alloc as operator new.
template <class T>
AlignedArray<T> make_aligned(size_t n) {
  static_assert(std::is_trivially_destructible_v<T> && alignof(T) <= 64);
  return AlignedArray<T>(static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t{64})));
}

/// A buffer of at least n elements of T, kept per thread and per kSlot from call to call, its
/// contents unspecified: a fresh multi-megabyte allocation on every call of a kernel means fresh
/// pages from the OS each time, whose page faults cost more than the work done in them (im2col
/// columns and packed GEMM operands: the callers write every element they read). Grows, never
/// shrinks; freed when the thread ends. Aligned to 64 bytes (make_aligned).
template <class T, int kSlot = 0>
T* thread_scratch(size_t n) {
  thread_local AlignedArray<T> buffer;
  thread_local size_t size = 0;
  if (size < n) {
    buffer.reset();  // no copy of the old contents, no zero fill
    buffer = make_aligned<T>(n);
    size = n;
  }
  // clang-tidy 14's analyzer runs the thread_local's destructor at this return; it runs at thread
  // exit.
  return buffer.get();  // NOLINT(clang-analyzer-cplusplus.NewDelete)
}

#if defined(__SSE2__)
/// src[0], src[2], ..., src[30]: the even bytes of src[0..15] and, shifted by one, of
/// src[15..30] (SSE2; reads src[0] to src[30] only).
inline __m128i even_bytes16(const uint8_t* src) {
  const __m128i low = _mm_set1_epi16(0x00ff);
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  const __m128i b = _mm_srli_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 15)), 1);
  return _mm_packus_epi16(_mm_and_si128(a, low), _mm_and_si128(b, low));
}
#endif

/// dst[j] = src[2 * j] for j in [0, n): 16 bytes at a time (even_bytes16), so that im2col of a
/// stride-2 convolution's 8-bit input is not a byte loop (which was half of a QLinearConv CNN's
/// im2col). Reads src[0] to src[2 * (n - 1)] only.
inline void copy_even_bytes(const uint8_t* src, uint8_t* dst, int64_t n) {
  int64_t j = 0;
#if defined(__SSE2__)
  for (; j + 16 <= n; j += 16)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j), even_bytes16(src + 2 * j));
#endif
  for (; j < n; ++j) dst[j] = src[2 * j];
}

/// im2col for 2-D geometry (see im2col below): the same matrix, without the multi-index
/// bookkeeping per output row that dominates the generic version on small planes.
template <class T>
void im2col_2d(const T* x, int64_t channels, const SpatialGeometry& g, int64_t r0, int64_t r1,
               T* col, T pad = T(0)) {
  const int64_t h = g.in[0], w = g.in[1], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1];
  const int64_t sh = g.strides[0], sw = g.strides[1], dh = g.dilations[0], dw = g.dilations[1];
  const int64_t ph = g.pads_begin[0], pw = g.pads_begin[1], cols = (r1 - r0) * ow;
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * h * w;
    for (int64_t ki = 0; ki < kh; ++ki) {
      for (int64_t kj = 0; kj < kw; ++kj) {
        T* row = col + ((c * kh + ki) * kw + kj) * cols;
        const int64_t kofs = kj * dw - pw;
        // Output columns [j_lo, j_hi) read inside the input row; the others read padding.
        const int64_t j_lo = kofs >= 0 ? 0 : std::min(ow, (-kofs + sw - 1) / sw);
        const int64_t j_hi =
            std::max(j_lo, w - 1 - kofs < 0 ? 0 : std::min(ow, (w - 1 - kofs) / sw + 1));
        for (int64_t r = r0; r < r1; ++r) {
          T* dst = row + (r - r0) * ow;
          const int64_t ih = r * sh - ph + ki * dh;
          if (ih < 0 || ih >= h) {
            std::fill(dst, dst + ow, pad);
            continue;
          }
          const T* src = xc + ih * w + kofs;
          for (int64_t j = 0; j < j_lo; ++j) dst[j] = pad;
          if (sw == 1) {
            for (int64_t j = j_lo; j < j_hi; ++j) dst[j] = src[j];
          } else if constexpr (sizeof(T) == 1) {
            if (sw == 2) {
              copy_even_bytes(reinterpret_cast<const uint8_t*>(src + j_lo * sw),
                              reinterpret_cast<uint8_t*>(dst + j_lo), j_hi - j_lo);
            } else {
              for (int64_t j = j_lo; j < j_hi; ++j) dst[j] = src[j * sw];
            }
          } else {
            for (int64_t j = j_lo; j < j_hi; ++j) dst[j] = src[j * sw];
          }
          for (int64_t j = j_hi; j < ow; ++j) dst[j] = pad;
        }
      }
    }
  }
}

/// Unfolds `channels` planes of `x` (each product(g.in) elements) into the column matrix `col`
/// with rows (channel, kernel offset) and columns the output positions whose outer index (all
/// spatial dims but the last, flattened) lies in [outer_begin, outer_end). Padding reads `pad`
/// (0 unless given: the quantized kernels pass the input's zero point).
template <class T>
void im2col(const T* x, int64_t channels, const SpatialGeometry& g, int64_t outer_begin,
            int64_t outer_end, T* col, T pad = T(0)) {
  if (g.in.size() == 2) return im2col_2d(x, channels, g, outer_begin, outer_end, col, pad);
  const size_t nd = g.in.size(), last = nd - 1;
  const int64_t in_size = product(g.in), k_size = product(g.kernel), out_last = g.out[last];
  const int64_t cols = (outer_end - outer_begin) * out_last;
  std::vector<int64_t> kidx(nd, 0), oidx(nd, 0);
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * in_size;
    std::fill(kidx.begin(), kidx.end(), 0);
    for (int64_t kk = 0; kk < k_size; ++kk) {
      T* row = col + (c * k_size + kk) * cols;
      // Multi-index of outer_begin over the outer dims.
      for (size_t d = last, rem = static_cast<size_t>(outer_begin); d-- > 0;) {
        oidx[d] = static_cast<int64_t>(rem) % g.out[d];
        rem /= static_cast<size_t>(g.out[d]);
      }
      const int64_t kofs = kidx[last] * g.dilations[last] - g.pads_begin[last];
      const int64_t s = g.strides[last], n_in = g.in[last];
      // Output columns [j_lo, j_hi) read inside the row; the others read padding.
      const int64_t j_lo = kofs >= 0 ? 0 : std::min(out_last, (-kofs + s - 1) / s);
      const int64_t j_hi =
          std::max(j_lo, n_in - 1 - kofs < 0 ? 0 : std::min(out_last, (n_in - 1 - kofs) / s + 1));
      for (int64_t o = outer_begin; o < outer_end; ++o) {
        bool valid = true;
        int64_t off = 0;
        for (size_t d = 0; d < last; ++d) {
          const int64_t p = oidx[d] * g.strides[d] - g.pads_begin[d] + kidx[d] * g.dilations[d];
          valid = valid && p >= 0 && p < g.in[d];
          off = off * g.in[d] + p;
        }
        T* dst = row + (o - outer_begin) * out_last;
        if (!valid) {
          std::fill(dst, dst + out_last, pad);
        } else {
          const T* src = xc + off * g.in[last] + kofs;
          std::fill(dst, dst + j_lo, pad);
          if (s == 1) {
            std::copy(src + j_lo, src + j_hi, dst + j_lo);
          } else {
            for (int64_t j = j_lo; j < j_hi; ++j) dst[j] = src[j * s];
          }
          std::fill(dst + j_hi, dst + out_last, pad);
        }
        for (size_t d = last; d-- > 0;) {
          if (++oidx[d] < g.out[d]) break;
          oidx[d] = 0;
        }
      }
      for (size_t d = nd; d-- > 0;) {
        if (++kidx[d] < g.kernel[d]) break;
        kidx[d] = 0;
      }
    }
  }
}

/// The adjoint of im2col over all output positions: adds every column entry into the plane
/// position it was read from (entries that fall into padding are dropped). `x` must be
/// initialised by the caller.
template <class T>
void col2im(const T* col, int64_t channels, const SpatialGeometry& g, T* x) {
  const size_t nd = g.in.size(), last = nd - 1;
  const int64_t in_size = product(g.in), k_size = product(g.kernel), out_last = g.out[last];
  const int64_t outer = product(g.out) / std::max<int64_t>(out_last, 1), cols = product(g.out);
  std::vector<int64_t> kidx(nd, 0), oidx(nd, 0);
  for (int64_t c = 0; c < channels; ++c) {
    T* xc = x + c * in_size;
    std::fill(kidx.begin(), kidx.end(), 0);
    for (int64_t kk = 0; kk < k_size; ++kk) {
      const T* row = col + (c * k_size + kk) * cols;
      std::fill(oidx.begin(), oidx.end(), 0);
      const int64_t kofs = kidx[last] * g.dilations[last] - g.pads_begin[last];
      for (int64_t o = 0; o < outer; ++o) {
        bool valid = true;
        int64_t off = 0;
        for (size_t d = 0; d < last; ++d) {
          const int64_t p = oidx[d] * g.strides[d] - g.pads_begin[d] + kidx[d] * g.dilations[d];
          valid = valid && p >= 0 && p < g.in[d];
          off = off * g.in[d] + p;
        }
        if (valid) {
          const T* src = row + o * out_last;
          T* dst = xc + off * g.in[last];
          const int64_t s = g.strides[last], n_in = g.in[last];
          for (int64_t j = 0; j < out_last; ++j) {
            const int64_t p = j * s + kofs;
            if (p >= 0 && p < n_in) dst[p] += src[j];
          }
        }
        for (size_t d = last; d-- > 0;) {
          if (++oidx[d] < g.out[d]) break;
          oidx[d] = 0;
        }
      }
      for (size_t d = nd; d-- > 0;) {
        if (++kidx[d] < g.kernel[d]) break;
        kidx[d] = 0;
      }
    }
  }
}

}  // namespace onnxdbg::reference
