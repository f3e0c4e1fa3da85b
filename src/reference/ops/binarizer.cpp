// Binarizer (ai.onnx.ml Binarizer-1): Y = 1 where X > threshold (default 0), else 0, in X's
// dtype (int32, int64, float, double) and shape; NaN gives 0.
#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status binarizer(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const DType t = x->dtype();
  if (t != DType::kInt32 && t != DType::kInt64 && t != DType::kFloat && t != DType::kDouble)
    return model_error(ctx.describe() + " takes int32, int64, float or double input, got " +
                       std::string(dtype_name(t)));
  const double threshold = ctx.attr_float("threshold", 0.0f);
  Tensor y(t, x->shape());
  for (int64_t i = 0; i < x->numel(); ++i)
    y.set_from_double(i, x->get_as_double(i) > threshold ? 1 : 0);
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_binarizer(KernelRegistry& r) {
  r.add("Binarizer", 1, binarizer, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
