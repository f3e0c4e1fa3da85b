// Optional (ONNX Optional-15): an optional holding its input (a tensor or a sequence), or an
// empty optional when the input is omitted (the `type` attribute then says of what).
#include "reference/ops/sequence_common.h"

namespace onnxdbg::reference {
namespace {

Status optional(KernelContext& ctx) {
  const Value* v = ctx.input_value(0);
  if (!v) {
    if (!ctx.has_attr("type"))
      return model_error(ctx.describe() + " has neither an input nor a 'type' attribute");
    ctx.set_output_value(0, Value::none());
    return Status::ok();
  }
  if (v->is_optional()) return wrong_kind(ctx, 0, "a tensor or a sequence", *v);
  ctx.set_output_value(0, Value::optional_of(*v));
  return Status::ok();
}

}  // namespace

void register_optional(KernelRegistry& r) {
  r.add("Optional", 15, optional, HalfMode::kNative).through(28);
}

}  // namespace onnxdbg::reference
