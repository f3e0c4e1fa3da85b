// RandomUniform (ONNX RandomUniform-1): a tensor of attribute `shape` and `dtype` (default
// float32) with values uniform in [low, high) (defaults 0, 1); seeded like ONNX's reference
// (random_common.h).
#include "reference/ops/random_common.h"

namespace onnxdbg::reference {
namespace {

Status random_uniform(KernelContext& ctx) {
  if (!ctx.has_attr("shape"))
    return model_error(ctx.describe() + " is missing its required attribute 'shape'");
  ODB_ASSIGN_OR_RETURN(DType t, random_dtype(ctx, DType::kFloat));
  ODB_ASSIGN_OR_RETURN(Tensor y, random_fill(ctx, t, ctx.attr_ints("shape"), false));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_random_uniform(KernelRegistry& r) {
  r.add("RandomUniform", 1, random_uniform, HalfMode::kNative).through(22);
}

}  // namespace onnxdbg::reference
