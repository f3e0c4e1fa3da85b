// RandomUniformLike (ONNX RandomUniformLike-1): a tensor shaped like the input, of attribute
// `dtype` (default the input's type, which must then be floating point), with values uniform in
// [low, high); seeded like ONNX's reference (random_common.h).
#include "reference/ops/random_common.h"

namespace onnxdbg::reference {
namespace {

Status random_uniform_like(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (!ctx.has_attr("dtype") && !is_floating(x->dtype()))
    return model_error(ctx.describe() + ": input is " + std::string(dtype_name(x->dtype())) +
                       "; without a dtype attribute it must be floating point");
  ODB_ASSIGN_OR_RETURN(DType t, random_dtype(ctx, x->dtype()));
  ODB_ASSIGN_OR_RETURN(Tensor y, random_fill(ctx, t, x->shape(), false));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_random_uniform_like(KernelRegistry& r) {
  r.add("RandomUniformLike", 1, random_uniform_like, HalfMode::kNative).through(22);
}

}  // namespace onnxdbg::reference
