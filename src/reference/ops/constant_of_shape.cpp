// ConstantOfShape (ONNX ConstantOfShape-9): a tensor of the shape given by input 0 filled with the
// one element of the `value` attribute (default float32 zero).
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status constant_of_shape(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(auto shape, ints_of_input(ctx, 0, "input"));
  Tensor value = Tensor::scalar<float>(0.0f);
  if (ctx.has_attr("value")) {
    ODB_ASSIGN_OR_RETURN(value, ctx.attr_tensor("value"));
  }
  if (value.numel() != 1)
    return model_error(ctx.describe() + ": attribute 'value' must hold one element, it has shape " +
                       shape_to_string(value.shape()));
  for (int64_t d : shape)
    if (d < 0)
      return model_error(ctx.describe() + ": the requested shape " + list_to_string(shape) +
                         " has a negative dimension");
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, value.dtype(), shape));
  for (int64_t i = 0; i < out.numel(); ++i) copy_element(value, 0, out, i);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_constant_of_shape(KernelRegistry& r) {
  r.add("ConstantOfShape", 9, constant_of_shape, HalfMode::kNative).through(25);
}

}  // namespace onnxdbg::reference
