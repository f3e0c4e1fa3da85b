// Resize (ONNX Resize-10/11/13/18/19): nearest, linear (n-D multilinear) and cubic resampling.
// Opset 10 takes scales only and uses asymmetric coordinates; from 11 the output is given by
// scales or sizes, with roi for tf_crop_and_resize. From 18: `axes` (scales, sizes and roi then
// cover only those axes), keep_aspect_ratio_policy for sizes (not_larger / not_smaller: one scale
// for every listed axis, sizes round(scale * in), half away from zero) and antialias (linear and
// cubic filters stretched when downscaling). 19 adds coordinate mode half_pixel_symmetric.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/ops/resize_util.h"

namespace onnxdbg::reference {
namespace {

Expected<std::vector<double>> float_values(const KernelContext& ctx, const Tensor& t,
                                           const std::string& what) {
  if (t.dtype() != DType::kFloat && t.dtype() != DType::kDouble && t.dtype() != DType::kFloat16)
    return model_error(ctx.describe() + ": input '" + what + "' must be a float tensor, got " +
                       std::string(dtype_name(t.dtype())));
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.get_as_double(i);
  return v;
}

Status resize(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const size_t rank = x->shape().size();
  ResizeParams p;
  const std::string mode = ctx.attr_string("mode", "nearest");
  if (mode == "nearest")
    p.mode = ResizeMode::kNearest;
  else if (mode == "linear")
    p.mode = ResizeMode::kLinear;
  else if (mode == "cubic" && ctx.opset() >= 11)
    p.mode = ResizeMode::kCubic;
  else
    return model_error(ctx.describe() + ": unknown mode '" + mode + "'");

  // The axes scales, sizes and roi cover (Resize-18 attribute `axes`; all axes by default).
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && ctx.has_attr("axes")) {
    axes = ctx.attr_ints("axes");
    std::vector<bool> seen(rank);
    for (int64_t& a : axes) {
      ODB_ASSIGN_OR_RETURN(a, normalize_axis(a, static_cast<int64_t>(rank), "axes"));
      if (seen[static_cast<size_t>(a)])
        return model_error(ctx.describe() + ": attribute axes " +
                           list_to_string(ctx.attr_ints("axes")) + " repeats axis " +
                           std::to_string(a));
      seen[static_cast<size_t>(a)] = true;
    }
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  const Tensor* scales_t = nullptr;
  const Tensor* sizes_t = nullptr;
  if (ctx.opset() < 11) {
    p.coordinate_mode = "asymmetric";
    p.nearest_mode = "legacy";
    ODB_ASSIGN_OR_RETURN(scales_t, ctx.required_input(1));
  } else {
    if (ctx.opset() < 18 && (ctx.attr_int("antialias", 0) != 0 || ctx.has_attr("axes") ||
                             ctx.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch"))
      return model_error(ctx.describe() +
                         ": antialias, axes and keep_aspect_ratio_policy need opset 18, the "
                         "model has " +
                         std::to_string(ctx.opset()));
    p.antialias = ctx.attr_int("antialias", 0) != 0;
    p.coordinate_mode = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
    static const char* const kModes[] = {
        "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
        "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    if (std::find(std::begin(kModes), std::end(kModes), p.coordinate_mode) == std::end(kModes))
      return model_error(ctx.describe() + ": unknown coordinate_transformation_mode '" +
                         p.coordinate_mode + "'");
    p.nearest_mode = ctx.attr_string("nearest_mode", "round_prefer_floor");
    if (p.nearest_mode != "round_prefer_floor" && p.nearest_mode != "round_prefer_ceil" &&
        p.nearest_mode != "floor" && p.nearest_mode != "ceil")
      return model_error(ctx.describe() + ": unknown nearest_mode '" + p.nearest_mode + "'");
    p.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75f);
    p.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
    p.extrapolation_value = ctx.attr_float("extrapolation_value", 0.0f);
    scales_t = ctx.input(2);
    sizes_t = ctx.input(3);
    if (scales_t && scales_t->numel() == 0) scales_t = nullptr;
    if (sizes_t && sizes_t->numel() == 0) sizes_t = nullptr;
    if (p.coordinate_mode == "tf_crop_and_resize") {
      const Tensor* roi = ctx.input(1);
      const size_t na = axes.size();
      if (!roi || roi->numel() != static_cast<int64_t>(2 * na))
        return model_error(ctx.describe() + ": tf_crop_and_resize needs an roi of " +
                           std::to_string(2 * na) + " values for an input of shape " +
                           shape_to_string(x->shape()) + (na == rank ? "" : " and its axes"));
      ODB_ASSIGN_OR_RETURN(auto roi_v, float_values(ctx, *roi, "roi"));
      p.roi.assign(rank, 0.0);
      p.roi.resize(2 * rank, 1.0);
      for (size_t i = 0; i < na; ++i) {
        p.roi[static_cast<size_t>(axes[i])] = roi_v[i];
        p.roi[static_cast<size_t>(axes[i]) + rank] = roi_v[i + na];
      }
    }
  }
  if (scales_t && sizes_t)
    return model_error(ctx.describe() + ": only one of scales and sizes may be given");
  if (!scales_t && !sizes_t)
    return model_error(ctx.describe() + ": neither scales nor sizes is given");
  const std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return model_error(ctx.describe() + ": unknown keep_aspect_ratio_policy '" + policy + "'");
  p.scales.assign(rank, 1.0);
  p.out_shape = x->shape();
  if (sizes_t) {
    ODB_ASSIGN_OR_RETURN(auto sizes, ints_of_input(ctx, 3, "sizes"));
    if (sizes.size() != axes.size())
      return model_error(
          ctx.describe() + ": sizes " + list_to_string(sizes) + " needs one entry per " +
          (axes.size() == rank ? "dimension of the input of shape " + shape_to_string(x->shape())
                               : "axis of " + list_to_string(axes)));
    for (int64_t v : sizes)
      if (v < 0)
        return model_error(ctx.describe() + ": sizes " + list_to_string(sizes) +
                           " has a negative entry");
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t in = x->shape()[static_cast<size_t>(axes[i])];
        p.scales[static_cast<size_t>(axes[i])] =
            in == 0 ? 1.0 : static_cast<double>(sizes[i]) / static_cast<double>(in);
        p.out_shape[static_cast<size_t>(axes[i])] = sizes[i];
      }
    } else {
      // One scale for all listed axes: the largest that fits inside sizes (not_larger) or the
      // smallest that covers it (not_smaller).
      double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
      for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t in = x->shape()[static_cast<size_t>(axes[i])];
        if (in == 0)
          return model_error(ctx.describe() + ": keep_aspect_ratio_policy '" + policy +
                             "' cannot scale the empty axis " + std::to_string(axes[i]));
        const double si = static_cast<double>(sizes[i]) / static_cast<double>(in);
        scale = policy == "not_larger" ? std::min(scale, si) : std::max(scale, si);
      }
      for (int64_t a : axes) {
        const double out =
            std::round(scale * static_cast<double>(x->shape()[static_cast<size_t>(a)]));
        if (!(out < 0x1p62))
          return model_error(ctx.describe() + ": keep_aspect_ratio_policy '" + policy +
                             "' with sizes " + list_to_string(sizes) + " gives axis " +
                             std::to_string(a) + " a size too large to index");
        p.scales[static_cast<size_t>(a)] = scale;
        p.out_shape[static_cast<size_t>(a)] = static_cast<int64_t>(out);
      }
    }
  } else {
    ODB_ASSIGN_OR_RETURN(auto scales, float_values(ctx, *scales_t, "scales"));
    if (scales.size() != axes.size())
      return model_error(ctx.describe() + ": scales has " + std::to_string(scales.size()) +
                         " entries for an input of shape " + shape_to_string(x->shape()) +
                         (axes.size() == rank ? "" : " and axes " + list_to_string(axes)));
    for (size_t i = 0; i < axes.size(); ++i) {
      const auto d = static_cast<size_t>(axes[i]);
      if (!(scales[i] > 0) || !std::isfinite(scales[i]))
        return model_error(ctx.describe() + ": scale " + std::to_string(scales[i]) + " of axis " +
                           std::to_string(d) + " must be positive");
      const double out = std::floor(scales[i] * static_cast<double>(x->shape()[d]));
      if (!(out < 0x1p62))
        return model_error(ctx.describe() + ": scale " + std::to_string(scales[i]) + " of axis " +
                           std::to_string(d) + " gives an output too large to index");
      p.scales[d] = scales[i];
      p.out_shape[d] = static_cast<int64_t>(out);
    }
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, resize_tensor(ctx, *x, p));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_resize(KernelRegistry& r) {
  r.add("Resize", 10, resize, HalfMode::kNative);
  r.add("Resize", 11, resize, HalfMode::kNative);  // roi, sizes, coordinate modes, cubic
  r.add("Resize", 13, resize, HalfMode::kNative);  // optional roi/scales
  r.add("Resize", 18, resize, HalfMode::kNative);  // antialias, axes, keep_aspect_ratio_policy
  r.add("Resize", 19, resize, HalfMode::kNative);  // half_pixel_symmetric
}

}  // namespace onnxdbg::reference
