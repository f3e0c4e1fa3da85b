// Resize (ONNX Resize-10/11/13): nearest, linear (n-D multilinear) and cubic resampling. Opset 10
// takes scales only and uses asymmetric coordinates; from 11 the output is given by scales or
// sizes, with roi for tf_crop_and_resize. Opset 18's antialias/axes/keep_aspect_ratio_policy are
// reported as unsupported.
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

  const Tensor* scales_t = nullptr;
  const Tensor* sizes_t = nullptr;
  if (ctx.opset() < 11) {
    p.coordinate_mode = "asymmetric";
    p.nearest_mode = "legacy";
    ODB_ASSIGN_OR_RETURN(scales_t, ctx.required_input(1));
  } else {
    if (ctx.attr_int("antialias", 0) != 0 || ctx.has_attr("axes") ||
        ctx.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
      return unsupported(ctx.describe() +
                         ": antialias, axes and keep_aspect_ratio_policy (opset 18) "
                         "are not supported by the reference interpreter");
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
      if (!roi || roi->numel() != static_cast<int64_t>(2 * rank))
        return model_error(ctx.describe() + ": tf_crop_and_resize needs an roi of " +
                           std::to_string(2 * rank) + " values for an input of shape " +
                           shape_to_string(x->shape()));
      ODB_ASSIGN_OR_RETURN(p.roi, float_values(ctx, *roi, "roi"));
    }
  }
  if (scales_t && sizes_t)
    return model_error(ctx.describe() + ": only one of scales and sizes may be given");
  if (!scales_t && !sizes_t)
    return model_error(ctx.describe() + ": neither scales nor sizes is given");
  if (sizes_t) {
    ODB_ASSIGN_OR_RETURN(auto sizes, ints_of_input(ctx, 3, "sizes"));
    if (sizes.size() != rank)
      return model_error(ctx.describe() + ": sizes " + list_to_string(sizes) +
                         " needs one entry per dimension of the input of shape " +
                         shape_to_string(x->shape()));
    for (size_t d = 0; d < rank; ++d) {
      if (sizes[d] < 0)
        return model_error(ctx.describe() + ": sizes " + list_to_string(sizes) +
                           " has a negative entry");
      p.scales.push_back(x->shape()[d] == 0
                             ? 1.0
                             : static_cast<double>(sizes[d]) / static_cast<double>(x->shape()[d]));
    }
    p.out_shape = sizes;
  } else {
    ODB_ASSIGN_OR_RETURN(p.scales, float_values(ctx, *scales_t, "scales"));
    if (p.scales.size() != rank)
      return model_error(ctx.describe() + ": scales has " + std::to_string(p.scales.size()) +
                         " entries for an input of shape " + shape_to_string(x->shape()));
    for (size_t d = 0; d < rank; ++d) {
      if (!(p.scales[d] > 0) || !std::isfinite(p.scales[d]))
        return model_error(ctx.describe() + ": scale " + std::to_string(p.scales[d]) + " of axis " +
                           std::to_string(d) + " must be positive");
      p.out_shape.push_back(
          static_cast<int64_t>(std::floor(p.scales[d] * static_cast<double>(x->shape()[d]))));
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
  // Resize-18 added antialias, axes and keep_aspect_ratio_policy (refused above unless default)
  // and Resize-19 the half_pixel_symmetric mode (implemented), so 18 and 19 are covered.
  r.add("Resize", 13, resize, HalfMode::kNative).through(19);  // optional roi/scales
}

}  // namespace onnxdbg::reference
