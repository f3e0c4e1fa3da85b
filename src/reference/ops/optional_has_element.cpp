// OptionalHasElement (ONNX OptionalHasElement-15/18): a bool scalar, true when the optional input
// holds a value. From opset 18 the input may also be a tensor or a sequence (true) or omitted
// (false).
#include "reference/ops/sequence_common.h"

namespace onnxdbg::reference {
namespace {

Status optional_has_element(KernelContext& ctx) {
  const Value* v = ctx.input_value(0);
  bool has = false;
  if (!v) {
    if (ctx.opset() < 18) return model_error(ctx.describe() + " is missing its required input 0");
  } else if (v->is_optional()) {
    has = v->has_element();
  } else if (ctx.opset() < 18) {
    return wrong_kind(ctx, 0, "an optional", *v);
  } else {
    has = true;
  }
  ctx.set_output(0, Tensor::scalar<bool>(has));
  return Status::ok();
}

}  // namespace

void register_optional_has_element(KernelRegistry& r) {
  r.add("OptionalHasElement", 15, optional_has_element, HalfMode::kNative);
  // any input kind
  r.add("OptionalHasElement", 18, optional_has_element, HalfMode::kNative).through(28);
}

}  // namespace onnxdbg::reference
