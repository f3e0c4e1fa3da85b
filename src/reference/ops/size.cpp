// Size (ONNX Size-1/13): the number of elements of the input as an int64 scalar.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status size(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ctx.set_output(0, Tensor::scalar<int64_t>(x->numel()));
  return Status::ok();
}

}  // namespace

void register_size(KernelRegistry& r) { r.add("Size", 1, size, HalfMode::kNative).through(25); }

}  // namespace onnxdbg::reference
