// OptionalGetElement (ONNX OptionalGetElement-15/18): the value inside the optional input; an
// error for an empty optional. From opset 18 a tensor or sequence input is returned as is.
#include "reference/ops/sequence_common.h"

namespace onnxdbg::reference {
namespace {

Status optional_get_element(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Value* v, required_value(ctx, 0));
  if (!v->is_optional()) {
    if (ctx.opset() < 18) return wrong_kind(ctx, 0, "an optional", *v);
    ctx.set_output_value(0, *v);
    return Status::ok();
  }
  if (!v->has_element())
    return model_error(ctx.describe() +
                       ": the optional input is empty; there is no element to get");
  ctx.set_output_value(0, v->element());
  return Status::ok();
}

}  // namespace

void register_optional_get_element(KernelRegistry& r) {
  r.add("OptionalGetElement", 15, optional_get_element, HalfMode::kNative);
  // any input kind
  r.add("OptionalGetElement", 18, optional_get_element, HalfMode::kNative).through(28);
}

}  // namespace onnxdbg::reference
