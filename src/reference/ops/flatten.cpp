// Flatten (ONNX Flatten-1/9/11/13): reshapes to 2-D, (d0*...*d[axis-1], d[axis]*...*d[n-1]);
// negative axes count from the end (opset 11).
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status flatten(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t rank = x->rank();
  const int64_t axis_attr = ctx.attr_int("axis", 1);
  const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  if (axis < 0 || axis > rank)
    return model_error(ctx.describe() + ": axis " + std::to_string(axis_attr) +
                       " is out of range for an input of shape " + shape_to_string(x->shape()));
  const auto a = static_cast<size_t>(axis);
  Shape out{dims_product(x->shape(), 0, a), dims_product(x->shape(), a, x->shape().size())};
  ODB_ASSIGN_OR_RETURN(Tensor y, reshaped_input(ctx, 0, *x, std::move(out)));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_flatten(KernelRegistry& r) {
  r.add("Flatten", 1, flatten, HalfMode::kNative);
  r.add("Flatten", 11, flatten, HalfMode::kNative).through(25);  // negative axis
}

}  // namespace onnxdbg::reference
