// Squeeze (ONNX Squeeze-1/11/13): removes size-1 dimensions, those listed in `axes` (an attribute
// before opset 13, an optional input from 13) or every size-1 dimension when no axes are given.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status squeeze(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(auto axes_opt, ints_from_input_or_attr(ctx, 1, 13, "axes"));
  std::vector<bool> drop(x->shape().size(), false);
  if (axes_opt && !axes_opt->empty()) {  // an empty axes input squeezes all, as ORT does
    ODB_ASSIGN_OR_RETURN(auto axes, normalize_axes(ctx, *axes_opt, x->rank()));
    for (int64_t a : axes) {
      if (x->dim(a) != 1)
        return model_error(ctx.describe() + " cannot squeeze axis " + std::to_string(a) +
                           " of shape " + shape_to_string(x->shape()) + ": its size is " +
                           std::to_string(x->dim(a)) + ", not 1");
      drop[static_cast<size_t>(a)] = true;
    }
  } else {
    for (size_t i = 0; i < drop.size(); ++i) drop[i] = x->shape()[i] == 1;
  }
  Shape out;
  for (size_t i = 0; i < drop.size(); ++i)
    if (!drop[i]) out.push_back(x->shape()[i]);
  ODB_ASSIGN_OR_RETURN(Tensor y, reshaped_input(ctx, 0, *x, std::move(out)));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_squeeze(KernelRegistry& r) {
  r.add("Squeeze", 1, squeeze, HalfMode::kNative);
  r.add("Squeeze", 11, squeeze, HalfMode::kNative);              // negative axes
  r.add("Squeeze", 13, squeeze, HalfMode::kNative).through(25);  // axes as an input
}

}  // namespace onnxdbg::reference
