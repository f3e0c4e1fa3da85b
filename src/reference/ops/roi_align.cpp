// RoiAlign (ONNX RoiAlign-10/16): average or max of bilinear samples of X [N, C, H, W] over
// each region rois [R, 4] = (x1, y1, x2, y2) of image batch_indices[R], into
// [R, C, output_height, output_width]. Version 10 behaves like coordinate_transformation_mode
// "output_half_pixel" (no half-pixel shift, regions at least 1x1); version 16 adds the attribute
// with default "half_pixel". Sampling follows ONNX's reference (and ONNX Runtime): a sample
// outside [-1, H] x [-1, W] contributes 0, the grid is sampling_ratio or ceil(bin size) per bin,
// and "max" takes the largest weighted corner value.
#include <algorithm>
#include <cmath>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status roi_align_typed(KernelContext& ctx, const Tensor& x, const Tensor& rois,
                       const std::vector<int64_t>& batch, bool half_pixel, bool max_mode) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), r = rois.dim(0);
  const int64_t oh = ctx.attr_int("output_height", 1), ow = ctx.attr_int("output_width", 1);
  const int64_t ratio = ctx.attr_int("sampling_ratio", 0);
  const double scale = ctx.attr_float("spatial_scale", 1.0f);
  if (oh < 1 || ow < 1 || ratio < 0)
    return model_error(ctx.describe() +
                       ": output_height/output_width must be positive and "
                       "sampling_ratio non-negative");
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, x.dtype(), {r, c, oh, ow}));
  const T* pr = rois.data<T>();
  const double offset = half_pixel ? 0.5 : 0.0;
  for (int64_t k = 0; k < r; ++k) {
    const int64_t b = batch[static_cast<size_t>(k)];
    if (b < 0 || b >= n)
      return model_error(ctx.describe() + ": batch_indices[" + std::to_string(k) +
                         "] = " + std::to_string(b) + " is outside [0, " + std::to_string(n) + ")");
    const double x1 = static_cast<double>(pr[k * 4 + 0]) * scale - offset;
    const double y1 = static_cast<double>(pr[k * 4 + 1]) * scale - offset;
    double rw = static_cast<double>(pr[k * 4 + 2]) * scale - offset - x1;
    double rh = static_cast<double>(pr[k * 4 + 3]) * scale - offset - y1;
    if (!half_pixel) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    const int64_t gh =
        ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(oh)));
    const int64_t gw =
        ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(ow)));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    for (int64_t ch = 0; ch < c; ++ch) {
      const T* plane = x.data<T>() + (b * c + ch) * h * w;
      T* out = y.data<T>() + (k * c + ch) * oh * ow;
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy) {
            double yy = y1 + static_cast<double>(i) * bh +
                        (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
            for (int64_t ix = 0; ix < gw; ++ix) {
              double xx = x1 + static_cast<double>(j) * bw +
                          (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
              double v1 = 0, v2 = 0, v3 = 0, v4 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0;
              if (!(yy < -1.0 || yy > static_cast<double>(h) || xx < -1.0 ||
                    xx > static_cast<double>(w))) {
                double sy = std::max(yy, 0.0), sx = std::max(xx, 0.0);
                auto ylo = static_cast<int64_t>(sy), xlo = static_cast<int64_t>(sx);
                int64_t yhi = ylo + 1, xhi = xlo + 1;
                if (ylo >= h - 1) {
                  yhi = ylo = h - 1;
                  sy = static_cast<double>(ylo);
                }
                if (xlo >= w - 1) {
                  xhi = xlo = w - 1;
                  sx = static_cast<double>(xlo);
                }
                const double ly = sy - static_cast<double>(ylo), lx = sx - static_cast<double>(xlo);
                const double hy = 1 - ly, hx = 1 - lx;
                w1 = hy * hx;
                w2 = hy * lx;
                w3 = ly * hx;
                w4 = ly * lx;
                v1 = static_cast<double>(plane[ylo * w + xlo]);
                v2 = static_cast<double>(plane[ylo * w + xhi]);
                v3 = static_cast<double>(plane[yhi * w + xlo]);
                v4 = static_cast<double>(plane[yhi * w + xhi]);
              }
              if (max_mode) {
                const double m = std::max({w1 * v1, w2 * v2, w3 * v3, w4 * v4});
                acc = first ? m : std::max(acc, m);
                first = false;
              } else {
                acc += w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4;
              }
            }
          }
          out[i * ow + j] = static_cast<T>(max_mode ? acc : acc / count);
        }
    }
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status roi_align(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* rois, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(auto batch, ints_of_input(ctx, 2, "batch_indices"));
  if (x->rank() != 4 || rois->rank() != 2 || rois->dim(1) != 4 || rois->dtype() != x->dtype())
    return model_error(ctx.describe() +
                       ": expects X [N, C, H, W] and rois [R, 4] of X's type, got " +
                       shape_to_string(x->shape()) + " and " + shape_to_string(rois->shape()));
  if (static_cast<int64_t>(batch.size()) != rois->dim(0))
    return model_error(ctx.describe() + ": batch_indices has " + std::to_string(batch.size()) +
                       " values for " + std::to_string(rois->dim(0)) + " rois");
  const std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max")
    return model_error(ctx.describe() + ": unknown mode '" + mode + "'");
  std::string ctm = ctx.opset() >= 16
                        ? ctx.attr_string("coordinate_transformation_mode", "half_pixel")
                        : "output_half_pixel";
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return model_error(ctx.describe() + ": unknown coordinate_transformation_mode '" + ctm + "'");
  return visit_float(x->dtype(), "RoiAlign", [&](auto tag) {
    return roi_align_typed<decltype(tag)>(ctx, *x, *rois, batch, ctm == "half_pixel",
                                          mode == "max");
  });
}

}  // namespace

void register_roi_align(KernelRegistry& r) {
  r.add("RoiAlign", 10, roi_align);
  r.add("RoiAlign", 16, roi_align).through(22);
}

}  // namespace onnxdbg::reference
