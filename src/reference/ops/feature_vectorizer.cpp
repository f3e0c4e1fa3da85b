// FeatureVectorizer (ai.onnx.ml FeatureVectorizer-1): concatenates its inputs ([N, C_i], or [C_i]
// as one row) along the columns into a float [N, sum(inputdimensions)]; input i fills
// inputdimensions[i] columns, zero-padded when it has fewer, cut when it has more.
#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status feature_vectorizer(KernelContext& ctx) {
  const auto dims = ctx.attr_ints("inputdimensions");
  if (dims.size() != ctx.num_inputs())
    return model_error(ctx.describe() + " has " + std::to_string(dims.size()) +
                       " inputdimensions for " + std::to_string(ctx.num_inputs()) + " inputs");
  std::vector<FeatureMatrix> xs;
  int64_t n = -1, total = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    ODB_ASSIGN_OR_RETURN(FeatureMatrix x, feature_matrix(ctx, i));
    if (dims[i] < 0)
      return model_error(ctx.describe() + ": inputdimensions[" + std::to_string(i) +
                         "] is negative");
    if (n >= 0 && x.n != n)
      return model_error(ctx.describe() + ": input " + std::to_string(i) + " has " +
                         std::to_string(x.n) + " rows, input 0 has " + std::to_string(n));
    n = x.n;
    total += dims[i];
    xs.push_back(std::move(x));
  }
  if (n < 0) return model_error(ctx.describe() + " has no inputs");
  std::vector<double> y(static_cast<size_t>(n * total));
  for (int64_t r = 0; r < n; ++r) {
    int64_t col = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      for (int64_t j = 0; j < std::min(dims[i], xs[i].c); ++j)
        y[static_cast<size_t>(r * total + col + j)] = xs[i].row(r)[j];
      col += dims[i];
    }
  }
  ctx.set_output(0, float_matrix(y, n, total));
  return Status::ok();
}

}  // namespace

void register_feature_vectorizer(KernelRegistry& r) {
  r.add("FeatureVectorizer", 1, feature_vectorizer, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
