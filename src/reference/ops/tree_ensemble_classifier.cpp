// TreeEnsembleClassifier (ai.onnx.ml TreeEnsembleClassifier-1/3): each row of X walks every tree
// to a leaf; the leaves' class_weights are summed per class, base_values added, post_transform
// applied over the row (Z: [N, classes]) and Y is the label of the highest score. Two labels with
// votes for one class only is the binary case, which the spec leaves open; we follow ONNX
// Runtime there (see binary_row). Version 3 adds the *_as_tensor (double) attributes.
#include "reference/ops/tree_ensemble_common.h"

namespace onnxdbg::reference {
namespace {

// The binary case when only class 0 gets votes: s is its score. With only non-negative weights
// s is a probability: Y = labels[1] when s > 0.5, Z = [1 - s, s]; with mixed weights s is a
// margin: Y = labels[1] when s > 0, Z = [-s, s], or [logistic(-s), logistic(s)] under LOGISTIC.
// (ONNX Runtime writes a single probit score under PROBIT; we write [1 - p, p].)
int64_t binary_row(double s, bool all_positive, PostTransform transform, double* z) {
  if (transform == PostTransform::kProbit) {
    const double p = ml_probit(s);
    z[0] = 1 - p;
    z[1] = p;
  } else if (all_positive) {
    z[0] = 1 - s;
    z[1] = s;
  } else if (transform == PostTransform::kLogistic) {
    z[0] = ml_logistic(-s);
    z[1] = ml_logistic(s);
  } else {
    z[0] = -s;
    z[1] = s;
  }
  return (all_positive ? s > 0.5 : s > 0) ? 1 : 0;
}

Status tree_ensemble_classifier(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(FeatureMatrix x, feature_matrix(ctx, 0));
  ODB_ASSIGN_OR_RETURN(PostTransform transform, post_transform_of(ctx));
  ODB_ASSIGN_OR_RETURN(ClassLabels labels,
                       class_labels_of(ctx, "classlabels_int64s", "classlabels_strings"));
  const int64_t classes = labels.size();
  ODB_ASSIGN_OR_RETURN(TreeEnsemble e, parse_tree_ensemble(ctx, "class", classes));
  ODB_RETURN_IF_ERROR(check_tree_features(ctx, e, x));
  ODB_ASSIGN_OR_RETURN(std::vector<double> base, ml_doubles_attr(ctx, "base_values"));
  const int64_t nb = static_cast<int64_t>(base.size());
  if (nb != 0 && nb != classes && !(classes == 2 && nb == 1))
    return model_error(ctx.describe() + " has " + std::to_string(nb) + " base_values for " +
                       std::to_string(classes) + " classes");
  // ONNX Runtime's binary case: two labels, and every vote for the same one class.
  const bool binary = classes == 2 && e.voted.size() == 1;

  std::vector<double> z(static_cast<size_t>(x.n * classes));
  std::vector<int64_t> best(static_cast<size_t>(x.n));
  std::vector<char> has(static_cast<size_t>(classes));  // voted for in this row, or has a base
  for (int64_t i = 0; i < x.n; ++i) {
    double* s = z.data() + i * classes;
    std::fill(has.begin(), has.end(), 0);
    for (size_t root : e.roots)
      for (const auto& [k, w] : e.leaf(root, x.row(i)).votes) {
        s[k] += w;
        has[static_cast<size_t>(k)] = 1;
      }
    for (int64_t k = 0; k < nb; ++k) {
      s[k] += base[static_cast<size_t>(k)];
      has[static_cast<size_t>(k)] = 1;
    }
    int64_t& label = best[static_cast<size_t>(i)];
    if (binary && e.voted[0] == 0 && nb < 2) {
      label = binary_row(s[0], e.all_votes_positive, transform, s);
      continue;
    }
    if (binary) {
      // Votes for one class only, but a full score row: Y by the voted class's score as the
      // positive score (as above, whichever class it is), Z transformed as a row.
      double tmp[2];
      label = binary_row(s[e.voted[0]], e.all_votes_positive, PostTransform::kNone, tmp);
    } else {
      // The first highest score among the classes that have one (as ONNX Runtime does: a
      // class no leaf voted for and without a base value does not compete); class 0 if none.
      label = -1;
      for (int64_t k = 0; k < classes; ++k)
        if (has[static_cast<size_t>(k)] && (label < 0 || s[k] > s[label])) label = k;
      if (label < 0) label = 0;
    }
    apply_post_transform(transform, s, classes);
  }
  ctx.set_output(0, labels.gather(best));
  ctx.set_output(1, float_matrix(z, x.n, classes));
  return Status::ok();
}

}  // namespace

void register_tree_ensemble_classifier(KernelRegistry& r) {
  r.add("TreeEnsembleClassifier", 1, tree_ensemble_classifier, HalfMode::kNative, kMlDomain);
  r.add("TreeEnsembleClassifier", 3, tree_ensemble_classifier, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
