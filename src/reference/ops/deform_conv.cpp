// DeformConv (DeformConv-19; 22 adds bfloat16): 2-D convolution whose kernel taps are moved by
// learned offsets (Dai et al., "Deformable Convolutional Networks"), optionally scaled by a mask
// (modulated deformable convolution, v2). X [N, C, H, W], W [oC, C / group, kH, kW], offset
// [N, offset_group * 2 * kH * kW, oH, oW] holding (dy, dx) per tap, mask [N, offset_group * kH *
// kW, oH, oW] (default 1), B [oC]. Tap (i, j) of output (oh, ow) reads X bilinearly at
// (oh * sh - ph + i * dh + dy, ow * sw - pw + j * dw + dx), zero outside the image.
#include <cmath>
#include <vector>

#include "core/run_limits.h"
#include "reference/kernel_util.h"
#include "reference/ops/conv_common.h"
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

// X plane value at the real position (y, x), bilinear between the four neighbours, each one
// outside the plane counting as 0.
double bilinear_zero(const double* plane, int64_t h, int64_t w, double y, double x) {
  if (!(y > -1 && y < static_cast<double>(h) && x > -1 && x < static_cast<double>(w))) return 0;
  const double fy = std::floor(y), fx = std::floor(x);
  const auto y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const double ly = y - fy, lx = x - fx;
  auto at = [&](int64_t r, int64_t c) {
    return r >= 0 && r < h && c >= 0 && c < w ? plane[r * w + c] : 0.0;
  };
  return (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x0 + 1)) +
         ly * ((1 - lx) * at(y0 + 1, x0) + lx * at(y0 + 1, x0 + 1));
}

Status deform_conv_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* w, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const Tensor* offset, ctx.required_input(2));
  const Tensor* bias = ctx.input(3);
  const Tensor* mask = ctx.input(4);
  if (x->rank() != 4)
    return unsupported(ctx.describe() + ": only 2-D deformable convolution (X [N, C, H, W]) is " +
                       "implemented, got X of shape " + shape_to_string(x->shape()));
  ODB_RETURN_IF_ERROR(check_conv_operands(ctx, *x, *w));
  const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), wd = x->dim(3);
  const int64_t oc = w->dim(0), kh = w->dim(2), kw = w->dim(3);
  const int64_t group = ctx.attr_int("group", 1), offset_group = ctx.attr_int("offset_group", 1);
  // group and offset_group divide c >= 1, so they are at most c and no product below overflows.
  if (c < 1 || group < 1 || offset_group < 1 || c % group != 0 || oc % group != 0 ||
      c % offset_group != 0 || c / group != w->dim(1))
    return model_error(ctx.describe() + ": group " + std::to_string(group) + " and offset_group " +
                       std::to_string(offset_group) + " must divide the " + std::to_string(c) +
                       " input channels (and group the " + std::to_string(oc) +
                       " output channels) with W of shape " + shape_to_string(w->shape()));
  const Shape kernel = ctx.attr_ints("kernel_shape", {kh, kw});
  if (kernel != Shape{kh, kw})
    return model_error(ctx.describe() + ": kernel_shape " + ints_to_string(kernel) +
                       " does not match W of shape " + shape_to_string(w->shape()));
  ODB_ASSIGN_OR_RETURN(SpatialGeometry g, forward_geometry(ctx, {h, wd}, kernel, false));
  const int64_t oh = g.out[0], ow = g.out[1], taps = kh * kw;
  const Shape offset_shape{n, offset_group * 2 * taps, oh, ow};
  if (offset->shape() != offset_shape)
    return model_error(ctx.describe() + ": offset has shape " + shape_to_string(offset->shape()) +
                       ", expected " + shape_to_string(offset_shape));
  const Shape mask_shape{n, offset_group * taps, oh, ow};
  if (mask && mask->shape() != mask_shape)
    return model_error(ctx.describe() + ": mask has shape " + shape_to_string(mask->shape()) +
                       ", expected " + shape_to_string(mask_shape));
  for (const Tensor* t : {offset, bias, mask})
    if (t && t->dtype() != x->dtype())
      return model_error(ctx.describe() + ": offset, B and mask must have X's element type " +
                         std::string(dtype_name(x->dtype())) + ", got " +
                         std::string(dtype_name(t->dtype())));
  if (bias && bias->shape() != Shape{oc})
    return model_error(ctx.describe() + ": B has shape " + shape_to_string(bias->shape()) +
                       ", expected [" + std::to_string(oc) + "]");
  return visit_float(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, x->dtype(), {n, oc, oh, ow}));
    const T* px = x->data<T>();
    const T* pw = w->data<T>();
    const T* po = offset->data<T>();
    const T* pm = mask ? mask->data<T>() : nullptr;
    T* py = y.data<T>();
    const int64_t cg = c / group, ocg = oc / group, c_per_offset = c / offset_group;
    const int64_t positions = oh * ow;
    std::vector<double> plane(static_cast<size_t>(h * wd));
    // col[(ci * taps + t) * positions + p]: the sampled (and masked) input of one image.
    ODB_ASSIGN_OR_RETURN(Tensor col_t, Tensor::make(DType::kDouble, {c * taps, positions}));
    double* col = col_t.data<double>();
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ci = 0; ci < c; ++ci) {
        if (run_should_stop()) return Status::ok();  // the interpreter fails the node
        const T* xc = px + (b * c + ci) * h * wd;
        for (int64_t i = 0; i < h * wd; ++i) plane[static_cast<size_t>(i)] = xc[i];
        const int64_t og = ci / c_per_offset;
        for (int64_t t = 0; t < taps; ++t) {
          const int64_t i = t / kw, j = t % kw;
          const T* dy = po + ((b * offset_group + og) * 2 * taps + 2 * t) * positions;
          const T* dx = dy + positions;
          const T* m = pm ? pm + ((b * offset_group + og) * taps + t) * positions : nullptr;
          double* dst = col + (ci * taps + t) * positions;
          for (int64_t r = 0; r < oh; ++r)
            for (int64_t q = 0; q < ow; ++q) {
              const int64_t p = r * ow + q;
              const double sy =
                  static_cast<double>(r * g.strides[0] - g.pads_begin[0] + i * g.dilations[0]) +
                  static_cast<double>(dy[p]);
              const double sx =
                  static_cast<double>(q * g.strides[1] - g.pads_begin[1] + j * g.dilations[1]) +
                  static_cast<double>(dx[p]);
              double v = bilinear_zero(plane.data(), h, wd, sy, sx);
              if (m) v *= static_cast<double>(m[p]);
              dst[p] = v;
            }
        }
      }
      for (int64_t o = 0; o < oc; ++o) {
        const int64_t grp = o / ocg;
        std::vector<double> acc(static_cast<size_t>(positions),
                                bias ? static_cast<double>(bias->data<T>()[o]) : 0.0);
        for (int64_t k = 0; k < cg * taps; ++k) {
          const double wv = static_cast<double>(pw[o * cg * taps + k]);
          const double* src = col + (grp * cg * taps + k) * positions;
          for (int64_t p = 0; p < positions; ++p) acc[static_cast<size_t>(p)] += wv * src[p];
        }
        for (int64_t p = 0; p < positions; ++p)
          py[(b * oc + o) * positions + p] = static_cast<T>(acc[static_cast<size_t>(p)]);
      }
    }
    ctx.set_output(0, std::move(y));
    return Status::ok();
  });
}

}  // namespace

void register_deform_conv(KernelRegistry& r) {
  r.add("DeformConv", 19, deform_conv_kernel).accumulates_in_double();
  r.add("DeformConv", 22, deform_conv_kernel).accumulates_in_double();
}

}  // namespace onnxdbg::reference
