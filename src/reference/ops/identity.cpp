// Identity (ONNX Identity-1/13/14/16): returns a copy of its input, whatever its kind: a tensor,
// a sequence (from opset 14) or an optional (from opset 16).
#include "reference/ops/sequence_common.h"

namespace onnxdbg::reference {
namespace {

Status identity(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Value* x, required_value(ctx, 0));
  if (Tensor* m = ctx.movable_input(0)) {
    ctx.set_output(0, std::move(*m));  // last use: no copy
    return Status::ok();
  }
  ctx.set_output_value(0, *x);
  return Status::ok();
}

}  // namespace

void register_identity(KernelRegistry& r) {
  r.add("Identity", 1, identity, HalfMode::kNative).through(25);
}

}  // namespace onnxdbg::reference
