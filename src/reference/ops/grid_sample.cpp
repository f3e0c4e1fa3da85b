// GridSample: samples X [N, C, D1, ..., Dr] at the normalised locations of grid
// [N, O1, ..., Or, r] (component 0 indexes the last dim Dr, as x; -1 and 1 are the outer pixel
// edges, or the outer pixel centres with align_corners) into [N, C, O1, ..., Or].
// GridSample-16: 4-D X only, modes bilinear, nearest, bicubic. GridSample-20 (and 22, which adds
// types): the same modes named linear, nearest, cubic, and any spatial rank for linear
// (multilinear over 2^r corners) and nearest; cubic stays 2-D (ONNX Runtime refuses it otherwise,
// and it is refused here). Nearest rounds half to even; cubic is Keys' with A = -0.75; padding
// zeros, border (clamp) or reflection (mirror at the same edges as the normalisation). Follows
// ONNX's reference, which matches ONNX Runtime.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

enum class Pad { kZeros, kBorder, kReflection };

double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const auto n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const auto n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

enum class Mode { kLinear, kNearest, kCubic };

// The most spatial dims sampled: linear mode weighs 2^dims neighbours per output element.
constexpr int64_t kMaxSpatialRank = 10;

// One channel of one image, its values in double, with the padding rule for reads outside it.
struct Volume {
  const double* v;
  const std::vector<int64_t>& dims;  // spatial dims, outer first
  Pad pad;
  const std::vector<double>& lo;
  const std::vector<double>& hi;
  // idx is clobbered.
  double at(int64_t* idx) const {
    int64_t off = 0;
    for (size_t k = 0; k < dims.size(); ++k) {
      int64_t i = idx[k];
      if (pad == Pad::kZeros) {
        if (i < 0 || i >= dims[k]) return 0.0;
      } else {
        if (pad == Pad::kReflection)
          i = static_cast<int64_t>(reflect(static_cast<double>(i), lo[k], hi[k]));
        i = std::clamp<int64_t>(i, 0, dims[k] - 1);
      }
      off = off * dims[k] + i;
    }
    return v[off];
  }
};

void cubic_coeffs(double t, double c[4]) {
  constexpr double a = -0.75;
  t = std::abs(t);
  c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

// The value at the (denormalised, padded) coordinates g, outer dim first.
double sample(const Volume& vol, Mode mode, const std::vector<double>& g,
              std::vector<int64_t>& idx) {
  const size_t r = g.size();
  if (mode == Mode::kNearest) {
    for (size_t k = 0; k < r; ++k) idx[k] = static_cast<int64_t>(g[k]);
    return vol.at(idx.data());
  }
  if (mode == Mode::kLinear) {
    double v = 0;
    for (uint32_t corner = 0; corner < (1u << r); ++corner) {
      double weight = 1;
      for (size_t k = 0; k < r; ++k) {
        const double f = std::floor(g[k]), frac = g[k] - f;
        const bool up = (corner >> (r - 1 - k)) & 1u;
        idx[k] = static_cast<int64_t>(f) + (up ? 1 : 0);
        weight *= up ? frac : 1 - frac;
      }
      v += weight * vol.at(idx.data());
    }
    return v;
  }
  // Cubic, 2-D: 4 x 4 neighbours.
  const int64_t y0 = static_cast<int64_t>(std::floor(g[0])) - 1,
                x0 = static_cast<int64_t>(std::floor(g[1])) - 1;
  double cy[4], cx[4];
  cubic_coeffs(g[0] - static_cast<double>(y0) - 1, cy);
  cubic_coeffs(g[1] - static_cast<double>(x0) - 1, cx);
  double v = 0;
  for (int64_t rr = 0; rr < 4; ++rr) {
    double row = 0;
    for (int64_t k = 0; k < 4; ++k) {
      idx[0] = y0 + rr;
      idx[1] = x0 + k;
      row += cx[k] * vol.at(idx.data());
    }
    v += cy[rr] * row;
  }
  return v;
}

template <bool kV20>
Status grid_sample(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* grid, ctx.required_input(1));
  const int64_t r = x->rank() - 2;
  if (r < 2 || (!kV20 && r != 2) || grid->rank() != x->rank() || grid->dim(0) != x->dim(0) ||
      grid->dim(grid->rank() - 1) != r)
    return model_error(ctx.describe() + ": expects X [N, C, H, W]" +
                       (kV20 ? std::string(" (or [N, C, D1, ..., Dr])") : std::string()) +
                       " and grid [N, Ho, Wo, 2]" +
                       (kV20 ? std::string(" (or [N, O1, ..., Or, r])") : std::string()) +
                       ", got " + shape_to_string(x->shape()) + " and " +
                       shape_to_string(grid->shape()));
  if (!is_floating(grid->dtype()))
    return model_error(ctx.describe() + ": grid must be a float tensor");
  const std::string mode_s = ctx.attr_string("mode", kV20 ? "linear" : "bilinear");
  const std::string pad_s = ctx.attr_string("padding_mode", "zeros");
  const bool align = ctx.attr_int("align_corners", 0) != 0;
  Mode mode;
  if (mode_s == (kV20 ? "linear" : "bilinear"))
    mode = Mode::kLinear;
  else if (mode_s == "nearest")
    mode = Mode::kNearest;
  else if (mode_s == (kV20 ? "cubic" : "bicubic"))
    mode = Mode::kCubic;
  else
    return model_error(ctx.describe() + ": unknown mode '" + mode_s + "'");
  if (r > kMaxSpatialRank)
    return unsupported(ctx.describe() + ": " + std::to_string(r) +
                       " spatial dims are more than the " + std::to_string(kMaxSpatialRank) +
                       " implemented (linear mode reads 2^dims neighbours)");
  if (mode == Mode::kCubic && r != 2)
    return unsupported(ctx.describe() + ": mode '" + mode_s +
                       "' is implemented for 4-D X [N, C, H, W] only, got shape " +
                       shape_to_string(x->shape()));
  Pad pad;
  if (pad_s == "zeros")
    pad = Pad::kZeros;
  else if (pad_s == "border")
    pad = Pad::kBorder;
  else if (pad_s == "reflection")
    pad = Pad::kReflection;
  else
    return model_error(ctx.describe() + ": unknown padding_mode '" + pad_s + "'");
  const int64_t n = x->dim(0), c = x->dim(1);
  const size_t nr = static_cast<size_t>(r);
  std::vector<int64_t> dims(nr);
  Shape out_shape{n, c};
  int64_t plane = 1, positions = 1;
  for (size_t k = 0; k < nr; ++k) {
    dims[k] = x->dim(static_cast<int64_t>(k) + 2);
    plane *= dims[k];
    out_shape.push_back(grid->dim(static_cast<int64_t>(k) + 1));
    positions *= out_shape.back();
  }
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, x->dtype(), out_shape));
  if (y.numel() == 0) {
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  if (plane == 0) return model_error(ctx.describe() + ": cannot sample an empty image");
  std::vector<double> lo(nr), hi(nr);
  for (size_t k = 0; k < nr; ++k) {
    lo[k] = align ? 0 : -0.5;
    hi[k] = align ? static_cast<double>(dims[k] - 1) : static_cast<double>(dims[k]) - 0.5;
  }
  auto denorm = [&](double v, int64_t len) {
    return align ? (v + 1) / 2 * static_cast<double>(len - 1)
                 : ((v + 1) * static_cast<double>(len) - 1) / 2;
  };
  std::vector<double> buf(static_cast<size_t>(plane)), g(nr);
  std::vector<int64_t> idx(nr);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t base = (b * c + ch) * plane;
      for (int64_t i = 0; i < plane; ++i) buf[static_cast<size_t>(i)] = x->get_as_double(base + i);
      const Volume vol{buf.data(), dims, pad, lo, hi};
      for (int64_t o = 0; o < positions; ++o) {
        const int64_t goff = (b * positions + o) * r;
        const int64_t out_index = (b * c + ch) * positions + o;
        bool nan = false, outside = false;
        for (size_t k = 0; k < nr; ++k) {
          // Grid component 0 is x (the last dim).
          double v = denorm(grid->get_as_double(goff + r - 1 - static_cast<int64_t>(k)), dims[k]);
          nan = nan || std::isnan(v);
          // Far outside the image every padding mode gives what it gives at 1e15 (zero, the
          // edge, or a reflection whose phase double precision no longer resolves); clamping
          // there keeps the conversions to int64 defined for infinite and huge coordinates.
          v = std::clamp(v, -1e15, 1e15);
          if (mode == Mode::kNearest) v = std::nearbyint(v);
          outside = outside || v < lo[k] || v > hi[k];
          g[k] = v;
        }
        if (nan) {  // no pixel to sample: NaN, as arithmetic gives
          y.set_from_double(out_index, std::numeric_limits<double>::quiet_NaN());
          continue;
        }
        if (outside && pad != Pad::kZeros)
          for (size_t k = 0; k < nr; ++k)
            g[k] = pad == Pad::kBorder ? std::clamp(g[k], 0.0, static_cast<double>(dims[k] - 1))
                                       : reflect(g[k], lo[k], hi[k]);
        y.set_from_double(out_index, sample(vol, mode, g, idx));
      }
    }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_grid_sample(KernelRegistry& r) {
  r.add("GridSample", 16, grid_sample<false>);
  r.add("GridSample", 20, grid_sample<true>);
  r.add("GridSample", 22, grid_sample<true>);  // adds bfloat16
}

}  // namespace onnxdbg::reference
