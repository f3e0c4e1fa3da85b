// TreeEnsembleRegressor (ai.onnx.ml TreeEnsembleRegressor-1/3): each row of X walks every tree to
// a leaf; the leaves' target_weights are aggregated per target (SUM, AVERAGE = SUM / trees, MIN,
// MAX; a target no leaf votes for counts 0, as in ONNX Runtime), base_values are added, then
// post_transform over the row. Version 3 adds the *_as_tensor (double) attributes.
#include "reference/ops/tree_ensemble_common.h"

namespace onnxdbg::reference {
namespace {

Status tree_ensemble_regressor(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(FeatureMatrix x, feature_matrix(ctx, 0));
  ODB_ASSIGN_OR_RETURN(PostTransform transform, post_transform_of(ctx));
  const std::string agg = ctx.attr_string("aggregate_function", "SUM");
  if (agg != "SUM" && agg != "AVERAGE" && agg != "MIN" && agg != "MAX")
    return model_error(ctx.describe() + ": aggregate_function '" + agg +
                       "' is not one of SUM, AVERAGE, MIN, MAX");
  int64_t targets = ctx.attr_int("n_targets", 0);
  if (!ctx.has_attr("n_targets"))
    for (int64_t id : ctx.attr_ints("target_ids")) targets = std::max(targets, id + 1);
  if (targets < 1)
    return model_error(ctx.describe() + ": n_targets is " + std::to_string(targets) +
                       ", it must be at least 1");
  ODB_ASSIGN_OR_RETURN(TreeEnsemble e, parse_tree_ensemble(ctx, "target", targets));
  ODB_RETURN_IF_ERROR(check_tree_features(ctx, e, x));
  ODB_ASSIGN_OR_RETURN(std::vector<double> base, ml_doubles_attr(ctx, "base_values"));
  if (!base.empty() && static_cast<int64_t>(base.size()) != targets)
    return model_error(ctx.describe() + " has " + std::to_string(base.size()) +
                       " base_values for " + std::to_string(targets) + " targets");

  std::vector<double> y(static_cast<size_t>(x.n * targets));
  std::vector<char> has(static_cast<size_t>(targets));
  for (int64_t i = 0; i < x.n; ++i) {
    double* s = y.data() + i * targets;
    std::fill(has.begin(), has.end(), 0);
    for (size_t root : e.roots)
      for (const auto& [t, w] : e.leaf(root, x.row(i)).votes) {
        double& v = s[t];
        if (agg == "MIN")
          v = has[static_cast<size_t>(t)] ? std::min(v, w) : w;
        else if (agg == "MAX")
          v = has[static_cast<size_t>(t)] ? std::max(v, w) : w;
        else
          v += w;
        has[static_cast<size_t>(t)] = 1;
      }
    for (int64_t t = 0; t < targets; ++t) {
      if (agg == "AVERAGE") s[t] /= static_cast<double>(e.roots.size());
      if (!base.empty()) s[t] += base[static_cast<size_t>(t)];
    }
    apply_post_transform(transform, s, targets);
  }
  ctx.set_output(0, float_matrix(y, x.n, targets));
  return Status::ok();
}

}  // namespace

void register_tree_ensemble_regressor(KernelRegistry& r) {
  r.add("TreeEnsembleRegressor", 1, tree_ensemble_regressor, HalfMode::kNative, kMlDomain);
  r.add("TreeEnsembleRegressor", 3, tree_ensemble_regressor, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
