// LinearRegressor (ai.onnx.ml LinearRegressor-1): Y[n, t] = sum_c X[n, c] * coefficients[t * C
// + c] + intercepts[t] for each of `targets` targets, then post_transform over each row (as the
// spec says; ONNX Runtime skips all but PROBIT when there is one target).
#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status linear_regressor(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(FeatureMatrix x, feature_matrix(ctx, 0));
  ODB_ASSIGN_OR_RETURN(PostTransform transform, post_transform_of(ctx));
  const std::vector<float> coef = ctx.attr_floats("coefficients");
  const std::vector<float> intercepts = ctx.attr_floats("intercepts");
  const int64_t targets = ctx.attr_int("targets", 1);
  if (targets < 1)
    return model_error(ctx.describe() + ": targets is " + std::to_string(targets) +
                       ", it must be at least 1");
  if (static_cast<int64_t>(coef.size()) != targets * x.c)
    return model_error(ctx.describe() + " has " + std::to_string(coef.size()) + " coefficients; " +
                       std::to_string(targets) + " targets of " + std::to_string(x.c) +
                       " features need " + std::to_string(targets * x.c));
  if (!intercepts.empty() && static_cast<int64_t>(intercepts.size()) != targets)
    return model_error(ctx.describe() + " has " + std::to_string(intercepts.size()) +
                       " intercepts for " + std::to_string(targets) + " targets");
  std::vector<double> y(static_cast<size_t>(x.n * targets));
  for (int64_t i = 0; i < x.n; ++i) {
    double* out = y.data() + i * targets;
    for (int64_t t = 0; t < targets; ++t) {
      double s = intercepts.empty() ? 0.0 : intercepts[static_cast<size_t>(t)];
      for (int64_t j = 0; j < x.c; ++j) s += x.row(i)[j] * coef[static_cast<size_t>(t * x.c + j)];
      out[t] = s;
    }
    apply_post_transform(transform, out, targets);
  }
  ctx.set_output(0, float_matrix(y, x.n, targets));
  return Status::ok();
}

}  // namespace

void register_linear_regressor(KernelRegistry& r) {
  r.add("LinearRegressor", 1, linear_regressor, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
