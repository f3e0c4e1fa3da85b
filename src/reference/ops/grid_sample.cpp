// GridSample (ONNX GridSample-16): samples X [N, C, H, W] at the normalised (x, y) locations of
// grid [N, Ho, Wo, 2] (-1 and 1 are the outer pixel edges, or the outer pixel centres with
// align_corners) into [N, C, Ho, Wo]. Modes bilinear, nearest (round half to even) and bicubic
// (Keys, A = -0.75); padding zeros, border (clamp) or reflection (mirror at the same edges as the
// normalisation). Follows ONNX's reference, which matches ONNX Runtime.
#include <algorithm>
#include <cmath>
#include <limits>

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

struct Plane {
  const double* v;
  int64_t h, w;
  Pad pad;
  double lo_x, lo_y, hi_x, hi_y;
  double at(int64_t r, int64_t c) const {
    if (pad == Pad::kZeros) return r >= 0 && r < h && c >= 0 && c < w ? v[r * w + c] : 0.0;
    if (pad == Pad::kReflection) {
      c = static_cast<int64_t>(reflect(static_cast<double>(c), lo_x, hi_x));
      r = static_cast<int64_t>(reflect(static_cast<double>(r), lo_y, hi_y));
    }
    return v[std::clamp<int64_t>(r, 0, h - 1) * w + std::clamp<int64_t>(c, 0, w - 1)];
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

Status grid_sample(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* grid, ctx.required_input(1));
  if (x->rank() != 4 || grid->rank() != 4 || grid->dim(0) != x->dim(0) || grid->dim(3) != 2)
    return model_error(ctx.describe() + ": expects X [N, C, H, W] and grid [N, Ho, Wo, 2], got " +
                       shape_to_string(x->shape()) + " and " + shape_to_string(grid->shape()));
  if (!is_floating(grid->dtype()))
    return model_error(ctx.describe() + ": grid must be a float tensor");
  const std::string mode = ctx.attr_string("mode", "bilinear");
  const std::string pad_s = ctx.attr_string("padding_mode", "zeros");
  const bool align = ctx.attr_int("align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return model_error(ctx.describe() + ": unknown mode '" + mode + "'");
  Pad pad;
  if (pad_s == "zeros")
    pad = Pad::kZeros;
  else if (pad_s == "border")
    pad = Pad::kBorder;
  else if (pad_s == "reflection")
    pad = Pad::kReflection;
  else
    return model_error(ctx.describe() + ": unknown padding_mode '" + pad_s + "'");
  const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3);
  const int64_t ho = grid->dim(1), wo = grid->dim(2);
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, x->dtype(), {n, c, ho, wo}));
  if (y.numel() == 0) {
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  if (h == 0 || w == 0) return model_error(ctx.describe() + ": cannot sample an empty image");
  const double lo_x = align ? 0 : -0.5, lo_y = align ? 0 : -0.5;
  const double hi_x = align ? static_cast<double>(w - 1) : static_cast<double>(w) - 0.5;
  const double hi_y = align ? static_cast<double>(h - 1) : static_cast<double>(h) - 0.5;
  auto denorm = [&](double v, int64_t len) {
    return align ? (v + 1) / 2 * static_cast<double>(len - 1)
                 : ((v + 1) * static_cast<double>(len) - 1) / 2;
  };
  std::vector<double> buf(static_cast<size_t>(h * w));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t base = (b * c + ch) * h * w;
      for (int64_t i = 0; i < h * w; ++i) buf[static_cast<size_t>(i)] = x->get_as_double(base + i);
      const Plane p{buf.data(), h, w, pad, lo_x, lo_y, hi_x, hi_y};
      for (int64_t oy = 0; oy < ho; ++oy)
        for (int64_t ox = 0; ox < wo; ++ox) {
          const int64_t g = ((b * ho + oy) * wo + ox) * 2;
          double gx = denorm(grid->get_as_double(g), w), gy = denorm(grid->get_as_double(g + 1), h);
          const int64_t out_index = ((b * c + ch) * ho + oy) * wo + ox;
          if (std::isnan(gx) || std::isnan(gy)) {  // no pixel to sample: NaN, as arithmetic gives
            y.set_from_double(out_index, std::numeric_limits<double>::quiet_NaN());
            continue;
          }
          // Far outside the image every padding mode gives what it gives at 1e15 (zero, the edge,
          // or a reflection whose phase double precision no longer resolves); clamping there
          // keeps the conversions to int64 below defined for infinite and huge coordinates.
          gx = std::clamp(gx, -1e15, 1e15);
          gy = std::clamp(gy, -1e15, 1e15);
          if (mode == "nearest") {
            gx = std::nearbyint(gx);
            gy = std::nearbyint(gy);
          }
          if (gx < lo_x || gx > hi_x || gy < lo_y || gy > hi_y) {
            if (pad == Pad::kBorder) {
              gx = std::clamp(gx, 0.0, static_cast<double>(w - 1));
              gy = std::clamp(gy, 0.0, static_cast<double>(h - 1));
            } else if (pad == Pad::kReflection) {
              gx = reflect(gx, lo_x, hi_x);
              gy = reflect(gy, lo_y, hi_y);
            }
          }
          double v = 0;
          if (mode == "nearest") {
            v = p.at(static_cast<int64_t>(gy), static_cast<int64_t>(gx));
          } else if (mode == "bilinear") {
            const auto x1 = static_cast<int64_t>(std::floor(gx)),
                       y1 = static_cast<int64_t>(std::floor(gy));
            const double dx1 = gx - static_cast<double>(x1), dx2 = 1 - dx1;
            const double dy1 = gy - static_cast<double>(y1), dy2 = 1 - dy1;
            v = dy2 * (dx2 * p.at(y1, x1) + dx1 * p.at(y1, x1 + 1)) +
                dy1 * (dx2 * p.at(y1 + 1, x1) + dx1 * p.at(y1 + 1, x1 + 1));
          } else {
            const int64_t x0 = static_cast<int64_t>(std::floor(gx)) - 1,
                          y0 = static_cast<int64_t>(std::floor(gy)) - 1;
            double cx[4], cy[4];
            cubic_coeffs(gx - static_cast<double>(x0) - 1, cx);
            cubic_coeffs(gy - static_cast<double>(y0) - 1, cy);
            for (int64_t r = 0; r < 4; ++r) {
              double row = 0;
              for (int64_t k = 0; k < 4; ++k) row += cx[k] * p.at(y0 + r, x0 + k);
              v += cy[r] * row;
            }
          }
          y.set_from_double(out_index, v);
        }
    }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_grid_sample(KernelRegistry& r) { r.add("GridSample", 16, grid_sample); }

}  // namespace onnxdbg::reference
