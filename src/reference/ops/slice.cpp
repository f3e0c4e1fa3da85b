// Slice (ONNX Slice-1/10/11/13): takes starts[i]:ends[i]:steps[i] along axes[i]. Opset 1 reads
// starts/ends/axes attributes; from 10 they are inputs and steps (possibly negative) is added.
// Negative starts/ends count from the end; out-of-range values are clamped as the spec says.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status slice(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t rank = x->rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.attr_ints("starts");
    ends = ctx.attr_ints("ends");
    if (ctx.has_attr("axes")) axes = ctx.attr_ints("axes");
  } else {
    ODB_ASSIGN_OR_RETURN(starts, ints_of_input(ctx, 1, "starts"));
    ODB_ASSIGN_OR_RETURN(ends, ints_of_input(ctx, 2, "ends"));
    ODB_ASSIGN_OR_RETURN(auto a, optional_ints_input(ctx, 3, "axes"));
    ODB_ASSIGN_OR_RETURN(auto s, optional_ints_input(ctx, 4, "steps"));
    if (a) axes = *a;
    if (s) steps = *s;
  }
  if (axes.empty() && (ctx.opset() < 10 ? !ctx.has_attr("axes") : !ctx.input(3)))
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty() && (ctx.opset() < 10 || !ctx.input(4))) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return model_error(ctx.describe() + ": starts " + list_to_string(starts) + ", ends " +
                       list_to_string(ends) + ", axes " + list_to_string(axes) + " and steps " +
                       list_to_string(steps) + " must have the same length");
  ODB_ASSIGN_OR_RETURN(auto naxes, normalize_axes(ctx, axes, rank));

  const auto in_strides = strides_of(x->shape());
  Shape out_shape = x->shape();
  std::vector<int64_t> strides = in_strides;
  int64_t base = 0;
  for (size_t i = 0; i < naxes.size(); ++i) {
    const auto a = static_cast<size_t>(naxes[i]);
    const int64_t dim = x->shape()[a], step = steps[i];
    if (step == 0)
      return model_error(ctx.describe() + ": step for axis " + std::to_string(axes[i]) + " is 0");
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t len = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      if (end > start)
        len = static_cast<int64_t>(
            (static_cast<uint64_t>(end - start) + static_cast<uint64_t>(step) - 1) /
            static_cast<uint64_t>(step));
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      const uint64_t ustep = uint64_t{0} - static_cast<uint64_t>(step);
      if (start > end)
        len = static_cast<int64_t>((static_cast<uint64_t>(start - end) + ustep - 1) / ustep);
    }
    out_shape[a] = len;
    if (len > 0) base += start * in_strides[a];
    strides[a] = len > 1 ? in_strides[a] * step : 0;
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x->dtype(), out_shape));
  for_each_broadcast(out_shape, {strides}, [&](int64_t i, const int64_t* off) {
    copy_element(*x, base + off[0], out, i);
  });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_slice(KernelRegistry& r) {
  r.add("Slice", 1, slice, HalfMode::kNative);   // starts/ends/axes attributes
  r.add("Slice", 10, slice, HalfMode::kNative);  // inputs, steps
}

}  // namespace onnxdbg::reference
