// Shared by TreeEnsembleRegressor and TreeEnsembleClassifier (ai.onnx.ml, versions 1 and 3):
// parsing the nodes_* and <vote>_* attribute tuples into trees with every length, id and mode
// checked (errors name the node and the attribute), and walking a tree to its leaf for one row.
#pragma once

#include <map>
#include <set>
#include <utility>

#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {

struct TreeEnsemble {
  enum class Mode { kLeq, kLt, kGte, kGt, kEq, kNeq, kLeaf };
  struct Node {
    Mode mode = Mode::kLeaf;
    int64_t feature = 0;
    double value = 0;
    size_t if_true = 0, if_false = 0;               // indices into `nodes`
    bool missing_true = false;                      // NaN takes the true branch
    std::vector<std::pair<int64_t, double>> votes;  // (target or class, weight)
  };
  std::vector<Node> nodes;
  std::vector<size_t> roots;   ///< the first node of each tree, trees in increasing id order
  int64_t max_feature = -1;    ///< highest feature id a branch reads
  std::vector<int64_t> voted;  ///< sorted distinct target/class ids that receive votes
  bool all_votes_positive = true;

  /// The leaf row `x` reaches from `root`. The spec sends NaN to the branch
  /// nodes_missing_value_tracks_true names (default false), whatever the comparison.
  const Node& leaf(size_t root, const double* x) const {
    const Node* n = &nodes[root];
    // Parsing checked that children exist; a cycle is cut after nodes.size() steps.
    for (size_t steps = 0; n->mode != Mode::kLeaf && steps < nodes.size(); ++steps) {
      const double v = x[n->feature], t = n->value;
      bool r = false;
      if (std::isnan(v)) {
        r = n->missing_true;
      } else {
        switch (n->mode) {
          case Mode::kLeq:
            r = v <= t;
            break;
          case Mode::kLt:
            r = v < t;
            break;
          case Mode::kGte:
            r = v >= t;
            break;
          case Mode::kGt:
            r = v > t;
            break;
          case Mode::kEq:
            r = v == t;
            break;
          case Mode::kNeq:
            r = v != t;
            break;
          case Mode::kLeaf:
            break;
        }
      }
      n = &nodes[r ? n->if_true : n->if_false];
    }
    return *n;
  }
};

/// Float-list attribute `name`, or (version 3) its double form `name`_as_tensor; empty when
/// neither is given. kModelError when both are.
inline Expected<std::vector<double>> ml_doubles_attr(const KernelContext& ctx,
                                                     const std::string& name) {
  const std::string tname = name + "_as_tensor";
  if (ctx.has_attr(name) && ctx.has_attr(tname))
    return model_error(ctx.describe() + " gives both " + name + " and " + tname);
  std::vector<double> out;
  if (ctx.has_attr(tname)) {
    ODB_ASSIGN_OR_RETURN(Tensor t, ctx.attr_tensor(tname));
    for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_as_double(i));
    return out;
  }
  for (float f : ctx.attr_floats(name)) out.push_back(f);
  return out;
}

/// Parses the trees and their votes (`vote` is "target" or "class": attributes <vote>_treeids,
/// <vote>_nodeids, <vote>_ids, <vote>_weights) for `n_outputs` targets or classes.
inline Expected<TreeEnsemble> parse_tree_ensemble(const KernelContext& ctx, const std::string& vote,
                                                  int64_t n_outputs) {
  auto bad = [&](const std::string& what) { return model_error(ctx.describe() + ": " + what); };
  const auto tree_ids = ctx.attr_ints("nodes_treeids"), node_ids = ctx.attr_ints("nodes_nodeids");
  const auto features = ctx.attr_ints("nodes_featureids");
  const auto trues = ctx.attr_ints("nodes_truenodeids"),
             falses = ctx.attr_ints("nodes_falsenodeids");
  const auto modes = ctx.attr_strings("nodes_modes");
  const auto missing = ctx.attr_ints("nodes_missing_value_tracks_true");
  ODB_ASSIGN_OR_RETURN(std::vector<double> values, ml_doubles_attr(ctx, "nodes_values"));
  const size_t n = node_ids.size();
  if (n == 0) return bad("nodes_nodeids is empty; a tree ensemble needs at least one node");
  const std::vector<std::pair<const char*, size_t>> lengths = {
      {"nodes_treeids", tree_ids.size()},  {"nodes_featureids", features.size()},
      {"nodes_truenodeids", trues.size()}, {"nodes_falsenodeids", falses.size()},
      {"nodes_modes", modes.size()},       {"nodes_values", values.size()}};
  for (const auto& [name, len] : lengths)
    if (len != n)
      return bad(std::string(name) + " has " + std::to_string(len) +
                 " entries but nodes_nodeids has " + std::to_string(n));
  if (!missing.empty() && missing.size() != n)
    return bad("nodes_missing_value_tracks_true has " + std::to_string(missing.size()) +
               " entries but nodes_nodeids has " + std::to_string(n));

  TreeEnsemble e;
  e.nodes.resize(n);
  std::map<std::pair<int64_t, int64_t>, size_t> index;
  std::map<int64_t, size_t> root_of;  // tree id -> its first node
  for (size_t i = 0; i < n; ++i) {
    if (!index.emplace(std::pair{tree_ids[i], node_ids[i]}, i).second)
      return bad("node " + std::to_string(node_ids[i]) + " of tree " + std::to_string(tree_ids[i]) +
                 " is defined twice");
    root_of.emplace(tree_ids[i], i);
  }
  static const std::map<std::string, TreeEnsemble::Mode> kModes = {
      {"BRANCH_LEQ", TreeEnsemble::Mode::kLeq}, {"BRANCH_LT", TreeEnsemble::Mode::kLt},
      {"BRANCH_GTE", TreeEnsemble::Mode::kGte}, {"BRANCH_GT", TreeEnsemble::Mode::kGt},
      {"BRANCH_EQ", TreeEnsemble::Mode::kEq},   {"BRANCH_NEQ", TreeEnsemble::Mode::kNeq},
      {"LEAF", TreeEnsemble::Mode::kLeaf}};
  for (size_t i = 0; i < n; ++i) {
    auto& node = e.nodes[i];
    auto m = kModes.find(modes[i]);
    if (m == kModes.end())
      return bad("nodes_modes[" + std::to_string(i) + "] '" + modes[i] + "' is not a node mode");
    node.mode = m->second;
    node.value = values[i];
    node.missing_true = !missing.empty() && missing[i] != 0;
    if (node.mode == TreeEnsemble::Mode::kLeaf) continue;
    node.feature = features[i];
    if (node.feature < 0) return bad("nodes_featureids[" + std::to_string(i) + "] is negative");
    e.max_feature = std::max(e.max_feature, node.feature);
    for (auto [child, dest] :
         {std::pair{trues[i], &node.if_true}, std::pair{falses[i], &node.if_false}}) {
      auto it = index.find({tree_ids[i], child});
      if (it == index.end())
        return bad("node " + std::to_string(node_ids[i]) + " of tree " +
                   std::to_string(tree_ids[i]) + " branches to node " + std::to_string(child) +
                   ", which the tree does not have");
      *dest = it->second;
    }
  }
  for (const auto& [tree, first] : root_of) e.roots.push_back(first);

  const auto v_trees = ctx.attr_ints(vote + "_treeids"), v_nodes = ctx.attr_ints(vote + "_nodeids");
  const auto v_ids = ctx.attr_ints(vote + "_ids");
  ODB_ASSIGN_OR_RETURN(std::vector<double> v_weights, ml_doubles_attr(ctx, vote + "_weights"));
  const size_t nv = v_ids.size();
  if (v_trees.size() != nv || v_nodes.size() != nv || v_weights.size() != nv)
    return bad(vote + "_treeids, " + vote + "_nodeids, " + vote + "_ids and " + vote +
               "_weights have different lengths (" + std::to_string(v_trees.size()) + ", " +
               std::to_string(v_nodes.size()) + ", " + std::to_string(nv) + ", " +
               std::to_string(v_weights.size()) + ")");
  std::set<int64_t> voted;
  for (size_t k = 0; k < nv; ++k) {
    auto it = index.find({v_trees[k], v_nodes[k]});
    if (it == index.end())
      return bad(vote + " weight " + std::to_string(k) + " is for node " +
                 std::to_string(v_nodes[k]) + " of tree " + std::to_string(v_trees[k]) +
                 ", which does not exist");
    if (v_ids[k] < 0 || v_ids[k] >= n_outputs)
      return bad(vote + "_ids[" + std::to_string(k) + "] is " + std::to_string(v_ids[k]) +
                 ", outside [0, " + std::to_string(n_outputs) + ")");
    e.nodes[it->second].votes.emplace_back(v_ids[k], v_weights[k]);
    voted.insert(v_ids[k]);
    if (v_weights[k] < 0) e.all_votes_positive = false;
  }
  e.voted.assign(voted.begin(), voted.end());
  return e;
}

/// Checks that `x` has the features the trees read.
inline Status check_tree_features(const KernelContext& ctx, const TreeEnsemble& e,
                                  const FeatureMatrix& x) {
  if (e.max_feature >= x.c)
    return model_error(ctx.describe() + " reads feature " + std::to_string(e.max_feature) +
                       " but the input has " + std::to_string(x.c) + " features");
  return Status::ok();
}

}  // namespace onnxdbg::reference
