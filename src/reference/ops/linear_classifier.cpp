// LinearClassifier (ai.onnx.ml LinearClassifier-1): scores Z = X * coefficients^T + intercepts
// (one row of C coefficients per class), post_transform over each row, Y = the label of the
// highest score. One row of coefficients with two labels is a binary classifier, which the
// spec leaves open; we follow ONNX Runtime: Y = labels[1] when the raw score s > 0, and
// Z = [1 - p, p] with p = s (NONE) or transform(s).
#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status linear_classifier(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(FeatureMatrix x, feature_matrix(ctx, 0));
  ODB_ASSIGN_OR_RETURN(ClassLabels labels,
                       class_labels_of(ctx, "classlabels_ints", "classlabels_strings"));
  ODB_ASSIGN_OR_RETURN(PostTransform transform, post_transform_of(ctx));
  const std::vector<float> coef = ctx.attr_floats("coefficients");
  const std::vector<float> intercepts = ctx.attr_floats("intercepts");
  const int64_t c = x.c;
  if (coef.empty() || c == 0 || static_cast<int64_t>(coef.size()) % c != 0)
    return model_error(ctx.describe() + " has " + std::to_string(coef.size()) +
                       " coefficients, which is not a positive multiple of the " +
                       std::to_string(c) + " features");
  const int64_t targets = static_cast<int64_t>(coef.size()) / c;
  if (!intercepts.empty() && static_cast<int64_t>(intercepts.size()) != targets)
    return model_error(ctx.describe() + " has " + std::to_string(intercepts.size()) +
                       " intercepts for " + std::to_string(targets) + " rows of coefficients");
  const bool binary = targets == 1 && labels.size() == 2;
  if (!binary && labels.size() != targets)
    return model_error(ctx.describe() + " has " + std::to_string(labels.size()) +
                       " class labels for " + std::to_string(targets) +
                       " rows of coefficients (they must match, or be 2 labels for 1 row)");
  const int64_t cols = binary ? 2 : targets;
  std::vector<double> z(static_cast<size_t>(x.n * cols));
  std::vector<int64_t> best(static_cast<size_t>(x.n));
  std::vector<double> row(static_cast<size_t>(targets));
  for (int64_t i = 0; i < x.n; ++i) {
    for (int64_t t = 0; t < targets; ++t) {
      double s = intercepts.empty() ? 0.0 : intercepts[static_cast<size_t>(t)];
      for (int64_t j = 0; j < c; ++j) s += x.row(i)[j] * coef[static_cast<size_t>(t * c + j)];
      row[static_cast<size_t>(t)] = s;
    }
    double* out = z.data() + i * cols;
    if (binary) {
      const double s = row[0];
      best[static_cast<size_t>(i)] = s > 0 ? 1 : 0;
      double p = s;
      apply_post_transform(transform, &p, 1);
      out[0] = 1 - p;
      out[1] = p;
      continue;
    }
    // The label is the first highest raw score (the transforms keep the order).
    int64_t arg = 0;
    for (int64_t t = 1; t < targets; ++t)
      if (row[static_cast<size_t>(t)] > row[static_cast<size_t>(arg)]) arg = t;
    best[static_cast<size_t>(i)] = arg;
    apply_post_transform(transform, row.data(), targets);
    std::copy(row.begin(), row.end(), out);
  }
  ctx.set_output(0, labels.gather(best));
  ctx.set_output(1, float_matrix(z, x.n, cols));
  return Status::ok();
}

}  // namespace

void register_linear_classifier(KernelRegistry& r) {
  r.add("LinearClassifier", 1, linear_classifier, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
