// MaxRoiPool (ONNX MaxRoiPool-1): max pooling of X [N, C, H, W] over each region of interest
// rois [R, 5] = (batch, x1, y1, x2, y2) into [R, C, pooled_h, pooled_w], with Caffe's rounding
// (corners rounded after scaling, bins floor/ceil, empty bins give 0).
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status max_roi_pool_typed(KernelContext& ctx, const Tensor& x, const Tensor& rois) {
  const auto pooled = ctx.attr_ints("pooled_shape");
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1)
    return model_error(ctx.describe() + ": pooled_shape must be two positive ints, got " +
                       list_to_string(pooled));
  const double scale = ctx.attr_float("spatial_scale", 1.0f);
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), r = rois.dim(0);
  const int64_t ph = pooled[0], pw = pooled[1];
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, x.dtype(), {r, c, ph, pw}));
  const T* pr = rois.data<T>();
  for (int64_t k = 0; k < r; ++k) {
    const T* roi = pr + k * 5;
    const auto b = static_cast<int64_t>(roi[0]);
    if (b < 0 || b >= n)
      return model_error(ctx.describe() + ": roi " + std::to_string(k) + " names batch " +
                         std::to_string(b) + " of " + std::to_string(n));
    const auto x1 = static_cast<int64_t>(std::round(static_cast<double>(roi[1]) * scale));
    const auto y1 = static_cast<int64_t>(std::round(static_cast<double>(roi[2]) * scale));
    const auto x2 = static_cast<int64_t>(std::round(static_cast<double>(roi[3]) * scale));
    const auto y2 = static_cast<int64_t>(std::round(static_cast<double>(roi[4]) * scale));
    const double bin_h =
        static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<double>(ph);
    const double bin_w =
        static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<double>(pw);
    for (int64_t ch = 0; ch < c; ++ch) {
      const T* plane = x.data<T>() + (b * c + ch) * h * w;
      T* out = y.data<T>() + (k * c + ch) * ph * pw;
      for (int64_t i = 0; i < ph; ++i)
        for (int64_t j = 0; j < pw; ++j) {
          const int64_t hs = std::clamp<int64_t>(
              static_cast<int64_t>(std::floor(static_cast<double>(i) * bin_h)) + y1, 0, h);
          const int64_t he = std::clamp<int64_t>(
              static_cast<int64_t>(std::ceil(static_cast<double>(i + 1) * bin_h)) + y1, 0, h);
          const int64_t ws = std::clamp<int64_t>(
              static_cast<int64_t>(std::floor(static_cast<double>(j) * bin_w)) + x1, 0, w);
          const int64_t we = std::clamp<int64_t>(
              static_cast<int64_t>(std::ceil(static_cast<double>(j + 1) * bin_w)) + x1, 0, w);
          T m = he <= hs || we <= ws ? T(0) : std::numeric_limits<T>::lowest();
          for (int64_t yy = hs; yy < he; ++yy)
            for (int64_t xx = ws; xx < we; ++xx) m = std::max(m, plane[yy * w + xx]);
          out[i * pw + j] = m;
        }
    }
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status max_roi_pool(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* rois, ctx.required_input(1));
  if (x->rank() != 4 || rois->rank() != 2 || rois->dim(1) != 5 || rois->dtype() != x->dtype())
    return model_error(ctx.describe() +
                       ": expects X [N, C, H, W] and rois [R, 5] of X's type, got " +
                       shape_to_string(x->shape()) + " and " + shape_to_string(rois->shape()));
  return visit_float(x->dtype(), "MaxRoiPool",
                     [&](auto tag) { return max_roi_pool_typed<decltype(tag)>(ctx, *x, *rois); });
}

}  // namespace

void register_max_roi_pool(KernelRegistry& r) { r.add("MaxRoiPool", 1, max_roi_pool).through(22); }

}  // namespace onnxdbg::reference
