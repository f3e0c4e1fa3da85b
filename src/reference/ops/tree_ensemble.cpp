// TreeEnsemble (ai.onnx.ml TreeEnsemble-5): sums, averages, or takes the minimum or maximum of the
// leaf weights the rows of X [N, F] reach in each tree, per target, into Y [N, n_targets] of X's
// type, then applies post_transform. Nodes are parallel arrays; a branch's true or false side is a
// node or (nodes_trueleafs / nodes_falseleafs = 1) a leaf index. Modes LEQ, LT, GTE, GT, EQ, NEQ
// compare X[feature] with nodes_splits; MEMBER tests membership of a set taken in node order from
// membership_values, the sets separated by NaN. NaN features take the true side where
// nodes_missing_value_tracks_true is 1. Targets no tree reaches are 0 for SUM and AVERAGE and,
// as in ONNX's reference, the largest or lowest finite float for MIN and MAX.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/run_limits.h"
#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

enum class Branch { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember };

// A tensor attribute (or its absence, as an empty vector) as doubles.
Expected<std::vector<double>> tensor_attr_values(const KernelContext& ctx,
                                                 const std::string& name) {
  if (!ctx.has_attr(name)) return std::vector<double>{};
  ODB_ASSIGN_OR_RETURN(Tensor t, ctx.attr_tensor(name));
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.get_as_double(i);
  return v;
}

Status tree_ensemble_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (!is_floating(x->dtype()) || x->rank() != 2)
    return model_error(ctx.describe() + " takes float features of shape [N, F], got " +
                       std::string(dtype_name(x->dtype())) + " of shape " +
                       shape_to_string(x->shape()));
  const int64_t n_targets = ctx.attr_int("n_targets", 0);
  const int64_t aggregate = ctx.attr_int("aggregate_function", 1);
  const int64_t post = ctx.attr_int("post_transform", 0);
  if (n_targets < 1)
    return model_error(ctx.describe() + ": n_targets must be positive, got " +
                       std::to_string(n_targets));
  if (aggregate < 0 || aggregate > 3)
    return model_error(ctx.describe() + ": aggregate_function must be 0 (AVERAGE), 1 (SUM), 2 " +
                       "(MIN) or 3 (MAX), got " + std::to_string(aggregate));
  if (post < 0 || post > 4)
    return model_error(ctx.describe() + ": post_transform must be in [0, 4], got " +
                       std::to_string(post));
  const auto features = ctx.attr_ints("nodes_featureids");
  const auto true_ids = ctx.attr_ints("nodes_truenodeids");
  const auto false_ids = ctx.attr_ints("nodes_falsenodeids");
  const auto true_leafs = ctx.attr_ints("nodes_trueleafs");
  const auto false_leafs = ctx.attr_ints("nodes_falseleafs");
  const auto missing = ctx.attr_ints("nodes_missing_value_tracks_true");
  const auto roots = ctx.attr_ints("tree_roots");
  const auto target_ids = ctx.attr_ints("leaf_targetids");
  ODB_ASSIGN_OR_RETURN(auto splits, tensor_attr_values(ctx, "nodes_splits"));
  ODB_ASSIGN_OR_RETURN(auto modes_d, tensor_attr_values(ctx, "nodes_modes"));
  ODB_ASSIGN_OR_RETURN(auto weights, tensor_attr_values(ctx, "leaf_weights"));
  ODB_ASSIGN_OR_RETURN(auto members, tensor_attr_values(ctx, "membership_values"));
  const size_t n_nodes = features.size(), n_leaves = weights.size();
  for (size_t len : {true_ids.size(), false_ids.size(), true_leafs.size(), false_leafs.size(),
                     splits.size(), modes_d.size()})
    if (len != n_nodes)
      return model_error(ctx.describe() + ": the nodes_* attributes must all have " +
                         std::to_string(n_nodes) + " entries (one per node)");
  if (!missing.empty() && missing.size() != n_nodes)
    return model_error(ctx.describe() + ": nodes_missing_value_tracks_true has " +
                       std::to_string(missing.size()) + " entries for " + std::to_string(n_nodes) +
                       " nodes");
  if (target_ids.size() != n_leaves)
    return model_error(ctx.describe() + ": leaf_targetids has " +
                       std::to_string(target_ids.size()) + " entries for " +
                       std::to_string(n_leaves) + " leaf_weights");
  for (int64_t t : target_ids)
    if (t < 0 || t >= n_targets)
      return model_error(ctx.describe() + ": leaf target id " + std::to_string(t) +
                         " is outside [0, " + std::to_string(n_targets) + ")");
  // Branch modes, and the membership set of each MEMBER node.
  std::vector<Branch> modes(n_nodes);
  std::vector<std::vector<double>> sets(n_nodes);
  size_t next_member = 0;
  for (size_t k = 0; k < n_nodes; ++k) {
    const double m = modes_d[k];
    if (!(m >= 0 && m <= 6) || m != std::floor(m))
      return model_error(ctx.describe() + ": node " + std::to_string(k) + " has mode " +
                         std::to_string(m) + ", not one of 0 (LEQ) to 6 (MEMBER)");
    modes[k] = static_cast<Branch>(static_cast<int>(m));
    if (features[k] < 0 || features[k] >= x->dim(1))
      return model_error(ctx.describe() + ": node " + std::to_string(k) + " reads feature " +
                         std::to_string(features[k]) + " but the input has " +
                         std::to_string(x->dim(1)) + " features");
    for (auto [id, leaf] : {std::pair{true_ids[k], true_leafs[k]}, {false_ids[k], false_leafs[k]}})
      if (id < 0 || static_cast<size_t>(id) >= (leaf ? n_leaves : n_nodes))
        return model_error(ctx.describe() + ": node " + std::to_string(k) + " points to " +
                           (leaf ? "leaf " : "node ") + std::to_string(id) +
                           ", which does not exist");
    if (modes[k] != Branch::kMember) continue;
    for (; next_member < members.size() && !std::isnan(members[next_member]); ++next_member)
      sets[k].push_back(members[next_member]);
    ++next_member;  // the NaN that ends the set
  }
  for (int64_t r : roots)
    if (r < 0 || static_cast<size_t>(r) >= n_nodes)
      return model_error(ctx.describe() + ": tree root " + std::to_string(r) +
                         " is not a node index");
  const int64_t n = x->dim(0);
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x->dtype(), {n, n_targets}));
  const double init = aggregate == 2   ? std::numeric_limits<float>::max()
                      : aggregate == 3 ? std::numeric_limits<float>::lowest()
                                       : 0.0;
  std::vector<double> row(static_cast<size_t>(n_targets));
  for (int64_t b = 0; b < n; ++b) {
    if (run_should_stop()) break;
    std::fill(row.begin(), row.end(), init);
    for (int64_t root : roots) {
      auto k = static_cast<size_t>(root);
      size_t leaf = n_leaves;
      for (size_t steps = 0;; ++steps) {
        const double v = x->get_as_double(b * x->dim(1) + features[k]), t = splits[k];
        bool r = false;
        if (std::isnan(v)) {
          r = !missing.empty() && missing[k] != 0;
        } else {
          switch (modes[k]) {
            case Branch::kLeq:
              r = v <= t;
              break;
            case Branch::kLt:
              r = v < t;
              break;
            case Branch::kGte:
              r = v >= t;
              break;
            case Branch::kGt:
              r = v > t;
              break;
            case Branch::kEq:
              r = v == t;
              break;
            case Branch::kNeq:
              r = v != t;
              break;
            case Branch::kMember:
              r = std::find(sets[k].begin(), sets[k].end(), v) != sets[k].end();
              break;
          }
        }
        const int64_t id = r ? true_ids[k] : false_ids[k];
        if ((r ? true_leafs[k] : false_leafs[k]) != 0) {
          leaf = static_cast<size_t>(id);
          break;
        }
        if (steps >= n_nodes) break;  // a cycle: this tree gives nothing
        k = static_cast<size_t>(id);
      }
      if (leaf >= n_leaves) continue;
      double& acc = row[static_cast<size_t>(target_ids[leaf])];
      const double w = weights[leaf];
      acc = aggregate == 2 ? std::min(acc, w) : aggregate == 3 ? std::max(acc, w) : acc + w;
    }
    if (aggregate == 0 && !roots.empty())
      for (double& v : row) v /= static_cast<double>(roots.size());
    apply_post_transform(static_cast<PostTransform>(post), row.data(), n_targets);
    for (int64_t t = 0; t < n_targets; ++t)
      y.set_from_double(b * n_targets + t, row[static_cast<size_t>(t)]);
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_tree_ensemble(KernelRegistry& r) {
  r.add("TreeEnsemble", 5, tree_ensemble_kernel, HalfMode::kViaFloat32, kMlDomain);
}

}  // namespace onnxdbg::reference
