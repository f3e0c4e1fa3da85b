// CastLike: converts input 0 to the element type of input 1 (CastLike-15), with Cast's semantics.
#include "reference/ops/cast_common.h"

namespace onnxdbg::reference {
namespace {

Status cast_like_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* like, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(Tensor out, cast_for_onnx(*x, like->dtype()));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_cast_like(KernelRegistry& r) {
  // CastLike-19..25: as Cast (new types, and attributes that concern only them).
  r.add("CastLike", 15, cast_like_kernel, HalfMode::kNative).through(25);
}

}  // namespace onnxdbg::reference
