// RandomNormal (ONNX RandomNormal-1): a tensor of attribute `shape` and `dtype` (default float32)
// with normal values of `mean` and standard deviation `scale` (defaults 0, 1); seeded like ONNX's
// reference (random_common.h).
#include "reference/ops/random_common.h"

namespace onnxdbg::reference {
namespace {

Status random_normal(KernelContext& ctx) {
  if (!ctx.has_attr("shape"))
    return model_error(ctx.describe() + " is missing its required attribute 'shape'");
  ODB_ASSIGN_OR_RETURN(DType t, random_dtype(ctx, DType::kFloat));
  ODB_ASSIGN_OR_RETURN(Tensor y, random_fill(ctx, t, ctx.attr_ints("shape"), true));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_random_normal(KernelRegistry& r) {
  r.add("RandomNormal", 1, random_normal, HalfMode::kNative).through(22);
}

}  // namespace onnxdbg::reference
