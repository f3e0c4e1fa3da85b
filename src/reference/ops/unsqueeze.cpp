// Unsqueeze (ONNX Unsqueeze-1/11/13): inserts size-1 dimensions at `axes` (positions in the
// output; an attribute before opset 13, an input from 13).
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status unsqueeze(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(auto axes_opt, ints_from_input_or_attr(ctx, 1, 13, "axes"));
  if (!axes_opt) return model_error(ctx.describe() + " has no axes");
  const int64_t out_rank = x->rank() + static_cast<int64_t>(axes_opt->size());
  ODB_ASSIGN_OR_RETURN(auto axes, normalize_axes(ctx, *axes_opt, out_rank));
  Shape out(static_cast<size_t>(out_rank), -1);
  for (int64_t a : axes) out[static_cast<size_t>(a)] = 1;
  size_t k = 0;
  for (auto& d : out)
    if (d == -1) d = x->shape()[k++];
  ODB_ASSIGN_OR_RETURN(Tensor y, reshaped_input(ctx, 0, *x, std::move(out)));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_unsqueeze(KernelRegistry& r) {
  r.add("Unsqueeze", 1, unsqueeze, HalfMode::kNative);
  r.add("Unsqueeze", 11, unsqueeze, HalfMode::kNative);              // negative axes
  r.add("Unsqueeze", 13, unsqueeze, HalfMode::kNative).through(25);  // axes as an input
}

}  // namespace onnxdbg::reference
