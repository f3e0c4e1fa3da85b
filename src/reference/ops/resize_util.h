// Shared by Resize and Upsample: n-D nearest / linear / cubic resampling following the ONNX
// Resize spec (coordinate_transformation_mode, nearest_mode, cubic_coeff_a, exclude_outside,
// extrapolation_value) and the ONNX reference implementation where the spec is silent. Values are
// computed in double and rounded once to the output dtype.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "reference/ops/data_movement.h"
#include "reference/parallel.h"

namespace onnxdbg::reference {

enum class ResizeMode { kNearest, kLinear, kCubic };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  /// half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric,
  /// tf_half_pixel_for_nn, tf_crop_and_resize.
  std::string coordinate_mode = "half_pixel";
  /// round_prefer_floor, round_prefer_ceil, floor, ceil, or "legacy" for Resize-10 and Upsample
  /// (truncate when upsampling, ceil when downsampling, as ONNX Runtime does for them).
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
  /// Resize-18 antialias: linear and cubic filters stretched by 1 / scale when downscaling.
  bool antialias = false;
  std::vector<double> scales;  ///< one per axis
  Shape out_shape;
  std::vector<double> roi;  ///< [starts..., ends...] for tf_crop_and_resize, else empty
};

/// One input sample and its weight.
struct ResizeTap {
  int64_t index;
  double weight;
};

/// Input coordinate of output coordinate x along one axis (ONNX Resize,
/// coordinate_transformation_mode). `out_width` is scale * in_len, which the reference
/// implementation uses where the spec says length_resized.
inline double resize_original_coordinate(const ResizeParams& p, size_t axis, int64_t x,
                                         int64_t in_len, int64_t out_len) {
  const double s = p.scales[axis], xd = static_cast<double>(x), in = static_cast<double>(in_len);
  const double out_width = s * in;
  const std::string& m = p.coordinate_mode;
  if (m == "asymmetric") return xd / s;
  if (m == "tf_half_pixel_for_nn") return (xd + 0.5) / s;
  if (m == "align_corners") return out_len == 1 ? 0.0 : xd * (in - 1) / (out_width - 1);
  if (m == "pytorch_half_pixel") return out_len > 1 ? (xd + 0.5) / s - 0.5 : 0.0;
  if (m == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out_len) / out_width;
    const double offset = in / 2 * (1 - adjustment);
    return offset + (xd + 0.5) / s - 0.5;
  }
  if (m == "tf_crop_and_resize") {
    const size_t rank = p.scales.size();
    const double start = p.roi[axis], end = p.roi[axis + rank];
    if (out_len == 1) return 0.5 * (start + end) * (in - 1);
    return start * (in - 1) + xd * (end - start) * (in - 1) / (out_width - 1);
  }
  return (xd + 0.5) / s - 0.5;  // half_pixel
}

/// Cubic convolution weights of the four samples floor(x)-1 .. floor(x)+2 for fraction r.
inline void resize_cubic_coeffs(double r, double a, double c[4]) {
  c[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
  c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
  c[2] = ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1;
  c[3] = ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a;
}

/// Taps of every output coordinate along one axis; an empty list means "extrapolation_value".
inline std::vector<std::vector<ResizeTap>> resize_axis_taps(const ResizeParams& p, size_t axis,
                                                            int64_t in_len, int64_t out_len) {
  std::vector<std::vector<ResizeTap>> taps(static_cast<size_t>(out_len));
  const auto clamp = [in_len](int64_t i) { return std::clamp<int64_t>(i, 0, in_len - 1); };
  for (int64_t x = 0; x < out_len; ++x) {
    auto& t = taps[static_cast<size_t>(x)];
    const double xo = resize_original_coordinate(p, axis, x, in_len, out_len);
    if (p.coordinate_mode == "tf_crop_and_resize" &&
        (xo < 0 || xo > static_cast<double>(in_len - 1)))
      continue;
    const double fl = std::floor(xo);
    const auto f = static_cast<int64_t>(fl);
    const double r = xo - fl;
    if (p.mode == ResizeMode::kNearest) {
      int64_t i = f;
      const std::string& nm = p.nearest_mode;
      if (nm == "legacy") {
        i = p.scales[axis] < 1 ? static_cast<int64_t>(std::ceil(xo)) : static_cast<int64_t>(xo);
      } else if (nm == "ceil") {
        i = static_cast<int64_t>(std::ceil(xo));
      } else if (nm == "round_prefer_ceil") {
        i = r >= 0.5 ? f + 1 : f;
      } else if (nm == "round_prefer_floor") {
        i = r > 0.5 ? f + 1 : f;
      }
      t.push_back({clamp(i), 1.0});
    } else if (p.antialias) {
      // The filter stretched by 1 / scale (scale capped at 1) over the 2 - 2 * start samples
      // nearest xo, weights normalised to sum 1, as ONNX's reference computes them. On a sample
      // (r == 0) the window is that of r = 1 from the sample before, which gives the same taps
      // as the reference's choice of nearest samples (ties to the lower index).
      const double s = std::min(p.scales[axis], 1.0);
      const double ratio = r == 0.0 ? 1.0 : r;
      const int64_t base = r == 0.0 ? f - 1 : f;
      const double support = p.mode == ResizeMode::kLinear ? 1.0 : 2.0;
      const auto start = static_cast<int64_t>(std::floor(-support / s)) + 1;
      const int64_t n = 2 - 2 * start;
      double sum = 0;
      const size_t first = t.size();
      for (int64_t k = 0; k < n; ++k) {
        const int64_t i = start + k;
        const double arg = std::abs(s * (static_cast<double>(i) - ratio));
        double w = 0;
        if (p.mode == ResizeMode::kLinear) {
          w = std::max(0.0, 1 - arg);
        } else {
          const double a = p.cubic_a;
          w = arg <= 1  ? ((a + 2) * arg - (a + 3)) * arg * arg + 1
              : arg < 2 ? ((a * arg - 5 * a) * arg + 8 * a) * arg - 4 * a
                        : 0.0;
        }
        if (p.exclude_outside && (base + i < 0 || base + i >= in_len)) w = 0;
        sum += w;
        t.push_back({clamp(base + i), w});
      }
      for (size_t k = first; k < t.size(); ++k) t[k].weight /= sum;
    } else if (r == 0.0) {
      t.push_back({clamp(f), 1.0});  // exactly on a sample
    } else if (p.mode == ResizeMode::kLinear) {
      t.push_back({clamp(f), 1 - r});
      t.push_back({clamp(f + 1), r});
    } else {
      double c[4];
      resize_cubic_coeffs(r, p.cubic_a, c);
      double sum = 0;
      for (int k = 0; k < 4; ++k) {
        const int64_t i = f - 1 + k;
        if (p.exclude_outside && (i < 0 || i >= in_len)) c[k] = 0;
        sum += c[k];
      }
      for (int k = 0; k < 4; ++k)
        t.push_back({clamp(f - 1 + k), p.exclude_outside ? c[k] / sum : c[k]});
    }
  }
  return taps;
}

/// True when resize_tensor's general loop, for an output with no extrapolated element, reduces to
/// resize_planes: a linear or cubic mode, float or double values, and every axis before the last
/// two copied (one tap of weight 1 per output index: N and C of an image resize).
inline bool resizes_planes_only(const ResizeParams& p, const Tensor& x,
                                const std::vector<std::vector<std::vector<ResizeTap>>>& taps) {
  const size_t rank = taps.size();
  if (p.mode == ResizeMode::kNearest || rank < 2 ||
      (x.dtype() != DType::kFloat && x.dtype() != DType::kDouble))
    return false;
  for (size_t d = 0; d < rank; ++d)
    for (const auto& t : taps[d])
      if (d + 2 < rank && (t.size() != 1 || t[0].weight != 1.0)) return false;
  return true;
}

/// resize_tensor's general loop for resizes_planes_only(): the same sums, term by term in the same
/// order (the last axis's taps fastest) and in double, with the same weights (1 * 1 * ... * wh *
/// ww is wh * ww exactly), so the same bits; planes in parallel, each independent of the others.
template <class T>
void resize_planes(const T* src, T* dst,
                   const std::vector<std::vector<std::vector<ResizeTap>>>& taps,
                   const Shape& in_shape, const Shape& out_shape) {
  const size_t rank = in_shape.size();
  const int64_t in_w = in_shape[rank - 1];
  const int64_t out_h = out_shape[rank - 2], out_w = out_shape[rank - 1];
  const auto& th = taps[rank - 2];
  const auto& tw = taps[rank - 1];
  int64_t planes = 1;
  for (size_t d = 0; d + 2 < rank; ++d) planes *= out_shape[d];
  const auto in_strides = strides_of(in_shape);
  parallel_for(planes, [&](int64_t plane) {
    // The input plane this output plane copies: each leading axis's single tap.
    int64_t in_off = 0, rest = plane;
    for (size_t d = rank - 2; d-- > 0;) {
      const int64_t i = rest % out_shape[d];
      rest /= out_shape[d];
      in_off += taps[d][static_cast<size_t>(i)][0].index * in_strides[d];
    }
    const T* in = src + in_off;
    T* out = dst + plane * out_h * out_w;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const auto& hs = th[static_cast<size_t>(oh)];
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const auto& ws = tw[static_cast<size_t>(ow)];
        double sum = 0;
        for (const ResizeTap& a : hs) {
          const T* row = in + a.index * in_w;
          for (const ResizeTap& b : ws)
            sum += a.weight * b.weight * static_cast<double>(row[b.index]);
        }
        out[oh * out_w + ow] = static_cast<T>(sum);
      }
    }
  });
}

/// Resamples x to p.out_shape. Errors: kModelError for rank/length mismatches or an empty input
/// axis that must be resized.
inline Expected<Tensor> resize_tensor(const KernelContext& ctx, const Tensor& x,
                                      const ResizeParams& p) {
  const size_t rank = x.shape().size();
  if (p.scales.size() != rank || p.out_shape.size() != rank)
    return model_error(ctx.describe() +
                       ": scales/sizes need one entry per dimension of the input of shape " +
                       shape_to_string(x.shape()));
  if (x.dtype() == DType::kString || x.dtype() == DType::kBool)
    return unsupported(ctx.describe() + " does not support element type " +
                       std::string(dtype_name(x.dtype())));
  for (size_t d = 0; d < rank; ++d)
    if (x.shape()[d] == 0 && p.out_shape[d] > 0)
      return model_error(ctx.describe() + " cannot resize an empty axis " + std::to_string(d) +
                         " of shape " + shape_to_string(x.shape()) + " to " +
                         std::to_string(p.out_shape[d]));
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x.dtype(), p.out_shape));
  if (out.numel() == 0) return out;
  std::vector<std::vector<std::vector<ResizeTap>>> taps(rank);
  for (size_t d = 0; d < rank; ++d) taps[d] = resize_axis_taps(p, d, x.shape()[d], p.out_shape[d]);
  const auto strides = strides_of(x.shape());
  bool any_extrapolation = false;
  for (const auto& axis : taps)
    for (const auto& t : axis) any_extrapolation = any_extrapolation || t.empty();
  const size_t es = dtype_size(x.dtype());
  if (p.mode == ResizeMode::kNearest && !any_extrapolation && rank > 0 &&
      (es == 1 || es == 2 || es == 4 || es == 8)) {
    // A gather: the source offset is a sum of one precomputed term per axis, and the last axis
    // a loop copying elements as same-sized unsigned integers.
    const size_t last = rank - 1;
    const int64_t out_last = p.out_shape[last];
    std::vector<int64_t> src_last(static_cast<size_t>(out_last));
    for (int64_t j = 0; j < out_last; ++j)
      src_last[static_cast<size_t>(j)] = taps[last][static_cast<size_t>(j)][0].index;
    auto gather = [&](auto tag) {
      using U = decltype(tag);  // an unsigned integer of the element's size: bits are copied
      const U* src = reinterpret_cast<const U*>(x.raw());
      U* dst = reinterpret_cast<U*>(out.raw());
      std::vector<int64_t> idx(rank, 0);
      for (int64_t o = 0; o < out.numel(); o += out_last) {
        int64_t base = 0;
        for (size_t d = 0; d < last; ++d)
          base += taps[d][static_cast<size_t>(idx[d])][0].index * strides[d];
        const U* row = src + base;
        for (int64_t j = 0; j < out_last; ++j) dst[o + j] = row[src_last[static_cast<size_t>(j)]];
        for (size_t d = last; d-- > 0;) {
          if (++idx[d] < p.out_shape[d]) break;
          idx[d] = 0;
        }
      }
    };
    switch (es) {
      case 1:
        gather(uint8_t{});
        break;
      case 2:
        gather(uint16_t{});
        break;
      case 4:
        gather(uint32_t{});
        break;
      case 8:
        gather(uint64_t{});
        break;
    }
    return out;
  }
  if (!any_extrapolation && resizes_planes_only(p, x, taps)) {
    if (x.dtype() == DType::kFloat)
      resize_planes(x.data<float>(), out.data<float>(), taps, x.shape(), p.out_shape);
    else
      resize_planes(x.data<double>(), out.data<double>(), taps, x.shape(), p.out_shape);
    return out;
  }
  std::vector<double> in;
  if (p.mode != ResizeMode::kNearest) {
    in.resize(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i) in[static_cast<size_t>(i)] = x.get_as_double(i);
  }
  std::vector<const std::vector<ResizeTap>*> cur(rank);
  std::vector<size_t> k(rank);
  int64_t o = 0;
  for_each_index(p.out_shape, [&](const std::vector<int64_t>& idx) {
    bool extrapolate = false;
    for (size_t d = 0; d < rank; ++d) {
      cur[d] = &taps[d][static_cast<size_t>(idx[d])];
      extrapolate = extrapolate || cur[d]->empty();
    }
    if (extrapolate) {
      out.set_from_double(o++, p.extrapolation_value);
      return;
    }
    if (p.mode == ResizeMode::kNearest) {
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) off += (*cur[d])[0].index * strides[d];
      copy_element(x, off, out, o++);
      return;
    }
    double sum = 0;
    std::fill(k.begin(), k.end(), 0);
    for (bool done = false; !done;) {
      double w = 1;
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) {
        const ResizeTap& t = (*cur[d])[k[d]];
        w *= t.weight;
        off += t.index * strides[d];
      }
      sum += w * in[static_cast<size_t>(off)];
      for (size_t d = rank;;) {  // next combination of taps
        if (d == 0) {
          done = true;
          break;
        }
        --d;
        if (++k[d] < cur[d]->size()) break;
        k[d] = 0;
      }
    }
    out.set_from_double(o++, sum);
  });
  return out;
}

}  // namespace onnxdbg::reference
