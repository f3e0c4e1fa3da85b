// Expand (ONNX Expand-8/13): broadcasts the input with the given shape (numpy rules in both
// directions, so a 1 in `shape` keeps the input's dimension).
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status expand(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(auto shape, ints_of_input(ctx, 1, "shape"));
  for (int64_t d : shape)
    if (d < 0)
      return model_error(ctx.describe() + ": shape " + list_to_string(shape) +
                         " has a negative dimension");
  auto out_shape = broadcast_shapes({x->shape(), shape});
  if (!out_shape)
    return model_error(ctx.describe() + " cannot expand a tensor of shape " +
                       shape_to_string(x->shape()) + " to " + list_to_string(shape) + ": " +
                       out_shape.status().message());
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x->dtype(), *out_shape));
  for_each_broadcast(*out_shape, {broadcast_strides(x->shape(), *out_shape)},
                     [&](int64_t i, const int64_t* off) { copy_element(*x, off[0], out, i); });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_expand(KernelRegistry& r) { r.add("Expand", 8, expand, HalfMode::kNative); }

}  // namespace onnxdbg::reference
