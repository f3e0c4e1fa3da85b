// Normalizer (ai.onnx.ml Normalizer-1): each row of X ([C] or [N, C]) divided by its maximum
// (MAX), the sum of its absolute values (L1) or its Euclidean norm (L2); a row whose divisor is
// 0 is copied. Output float, X's shape.
#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status normalizer(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(FeatureMatrix x, feature_matrix(ctx, 0));
  const std::string norm = ctx.attr_string("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2")
    return model_error(ctx.describe() + ": norm '" + norm + "' is not one of MAX, L1, L2");
  Tensor y(DType::kFloat, ctx.input(0)->shape());
  float* out = y.data<float>();
  for (int64_t i = 0; i < x.n; ++i) {
    const double* r = x.row(i);
    double d = 0;
    if (norm == "MAX") {
      d = x.c ? r[0] : 0;
      for (int64_t j = 1; j < x.c; ++j) d = std::max(d, r[j]);
    } else {
      for (int64_t j = 0; j < x.c; ++j) d += norm == "L1" ? std::abs(r[j]) : r[j] * r[j];
      if (norm == "L2") d = std::sqrt(d);
    }
    for (int64_t j = 0; j < x.c; ++j)
      out[i * x.c + j] = static_cast<float>(d == 0 ? r[j] : r[j] / d);
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_normalizer(KernelRegistry& r) {
  r.add("Normalizer", 1, normalizer, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
