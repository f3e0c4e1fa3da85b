// OneHot (ONNX OneHot-9/11): output[..., j, ...] = values[1] where j == indices[...] (negative
// indices count from depth), values[0] elsewhere; the new axis of size depth sits at `axis`.
// Indices outside [-depth, depth-1] give an all-off row.
#include <cmath>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status one_hot(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* depth_t, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const Tensor* vals, ctx.required_input(2));
  if (depth_t->numel() != 1)
    return model_error(ctx.describe() + ": depth must hold one value, it has shape " +
                       shape_to_string(depth_t->shape()));
  if (vals->numel() != 2)
    return model_error(ctx.describe() + ": values must hold [off_value, on_value], it has shape " +
                       shape_to_string(vals->shape()));
  const double depth_d = depth_t->get_as_double(0);
  if (!(depth_d >= 1) || !std::isfinite(depth_d))
    return model_error(ctx.describe() + ": depth " + std::to_string(depth_d) + " must be >= 1");
  const auto depth = static_cast<int64_t>(depth_d);
  const int64_t out_rank = ind->rank() + 1;
  ODB_ASSIGN_OR_RETURN(const int64_t axis,
                       normalize_axis_of(ctx, ctx.attr_int("axis", -1), out_rank));
  Shape out_shape = ind->shape();
  out_shape.insert(out_shape.begin() + axis, depth);
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, vals->dtype(), out_shape));
  const int64_t outer = dims_product(ind->shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = dims_product(ind->shape(), static_cast<size_t>(axis), ind->shape().size());
  for (int64_t i = 0; i < out.numel(); ++i) copy_element(*vals, 0, out, i);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const double v = ind->get_as_double(o * inner + in);
      if (!std::isfinite(v)) continue;
      auto j = static_cast<int64_t>(v);
      if (j < 0) j += depth;
      if (j < 0 || j >= depth) continue;
      copy_element(*vals, 1, out, (o * depth + j) * inner + in);
    }
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_one_hot(KernelRegistry& r) {
  r.add("OneHot", 9, one_hot, HalfMode::kNative);
  r.add("OneHot", 11, one_hot, HalfMode::kNative).through(28);  // negative indices
}

}  // namespace onnxdbg::reference
