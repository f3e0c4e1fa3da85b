// Shared by the ai.onnx.ml kernels (registered in domain "ai.onnx.ml"): the [N, C] feature matrix
// most of them read, post_transform (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT, computed as
// ONNX's Python reference and ONNX Runtime do) and the class-label attributes of the classifiers.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {

/// The domain every ai.onnx.ml kernel registers in.
inline const std::string kMlDomain = "ai.onnx.ml";

/// Input i as a row-major [n, c] matrix of doubles (exact for int32, float and double; int64
/// beyond 2^53 rounds): a [C] tensor is one row, an [N, C] tensor N rows. Errors (kModelError
/// naming the node): a missing input, a dtype other than int32/int64/float/double, a rank other
/// than 1 or 2.
struct FeatureMatrix {
  int64_t n = 0, c = 0;
  std::vector<double> v;
  const double* row(int64_t i) const { return v.data() + i * c; }
};

inline Expected<FeatureMatrix> feature_matrix(const KernelContext& ctx, size_t i) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(i));
  const DType t = x->dtype();
  if (t != DType::kInt32 && t != DType::kInt64 && t != DType::kFloat && t != DType::kDouble)
    return model_error(ctx.describe() + " takes int32, int64, float or double features, got " +
                       std::string(dtype_name(t)));
  if (x->rank() != 1 && x->rank() != 2)
    return model_error(ctx.describe() + " takes features of shape [C] or [N, C], got [" +
                       shape_to_string(x->shape()) + "]");
  FeatureMatrix m;
  m.n = x->rank() == 1 ? 1 : x->dim(0);
  m.c = x->rank() == 1 ? x->dim(0) : x->dim(1);
  m.v.resize(static_cast<size_t>(x->numel()));
  for (int64_t k = 0; k < x->numel(); ++k) m.v[static_cast<size_t>(k)] = x->get_as_double(k);
  return m;
}

enum class PostTransform { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

/// The `post_transform` attribute (default NONE); kModelError naming the node for another value.
inline Expected<PostTransform> post_transform_of(const KernelContext& ctx) {
  const std::string s = ctx.attr_string("post_transform", "NONE");
  if (s == "NONE") return PostTransform::kNone;
  if (s == "SOFTMAX") return PostTransform::kSoftmax;
  if (s == "LOGISTIC") return PostTransform::kLogistic;
  if (s == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (s == "PROBIT") return PostTransform::kProbit;
  return model_error(ctx.describe() + ": post_transform '" + s +
                     "' is not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT");
}

inline double ml_logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// sqrt(2) * erfinv(2p - 1), the inverse of the standard normal CDF, with erfinv by Winitzki's
/// approximation (a = 0.147): the one ONNX's Python reference (aionnxml/_common_classifier.py)
/// and ONNX Runtime (ml_common.h) both use, so PROBIT outputs agree with theirs (the exact
/// inverse differs from it by up to ~2e-3 relative). probit(0) = -inf and probit(1) = +inf, as
/// in ONNX Runtime (ONNX's reference returns 0 there).
inline double ml_probit(double p) {
  double x = 2 * p - 1;
  const double sgn = x < 0 ? -1.0 : 1.0;
  x = (1 - x) * (1 + x);
  if (x == 0) return sgn * INFINITY;
  const double lg = std::log(x);
  const double v = 2 / (M_PI * 0.147) + 0.5 * lg;
  const double v2 = 1 / 0.147 * lg;
  return M_SQRT2 * sgn * std::sqrt(-v + std::sqrt(v * v - v2));
}

/// Applies `t` in place to one row of scores: LOGISTIC and PROBIT element-wise, SOFTMAX over the
/// row, SOFTMAX_ZERO over the row with scores of magnitude <= 1e-7 left (near) zero rather than
/// counted as exp(0) (a row whose sum is 0 becomes 0.5 everywhere, as in ONNX's reference).
inline void apply_post_transform(PostTransform t, double* s, int64_t n) {
  switch (t) {
    case PostTransform::kNone:
      return;
    case PostTransform::kLogistic:
      for (int64_t j = 0; j < n; ++j) s[j] = ml_logistic(s[j]);
      return;
    case PostTransform::kProbit:
      for (int64_t j = 0; j < n; ++j) s[j] = ml_probit(s[j]);
      return;
    case PostTransform::kSoftmax: {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, s[j]);
      for (int64_t j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - mx));
      for (int64_t j = 0; j < n; ++j) s[j] /= sum;
      return;
    }
    case PostTransform::kSoftmaxZero: {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, s[j]);
      const double exp_neg_max = std::exp(-mx);
      for (int64_t j = 0; j < n; ++j) {
        s[j] = std::abs(s[j]) > 1e-7 ? std::exp(s[j] - mx) : s[j] * exp_neg_max;
        sum += s[j];
      }
      for (int64_t j = 0; j < n; ++j) s[j] = sum == 0 ? 0.5 : s[j] / sum;
      return;
    }
  }
}

/// A classifier's labels: `ints_attr` (int64) or `strings_attr`, exactly one of them non-empty.
struct ClassLabels {
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  bool is_string() const { return !strings.empty(); }
  int64_t size() const { return static_cast<int64_t>(is_string() ? strings.size() : ints.size()); }
  /// A [n] int64 or string tensor holding label idx[k] at k.
  Tensor gather(const std::vector<int64_t>& idx) const {
    const Shape shape{static_cast<int64_t>(idx.size())};
    if (is_string()) {
      Tensor y(DType::kString, shape);
      for (size_t k = 0; k < idx.size(); ++k) y.strings()[k] = strings[static_cast<size_t>(idx[k])];
      return y;
    }
    Tensor y(DType::kInt64, shape);
    for (size_t k = 0; k < idx.size(); ++k)
      y.data<int64_t>()[k] = ints[static_cast<size_t>(idx[k])];
    return y;
  }
};

inline Expected<ClassLabels> class_labels_of(const KernelContext& ctx, const std::string& ints_attr,
                                             const std::string& strings_attr) {
  ClassLabels l;
  l.ints = ctx.attr_ints(ints_attr);
  l.strings = ctx.attr_strings(strings_attr);
  if (l.ints.empty() == l.strings.empty())
    return model_error(ctx.describe() + " needs exactly one of " + ints_attr + " and " +
                       strings_attr + ", " + (l.ints.empty() ? "got neither" : "got both"));
  return l;
}

/// A [rows, cols] float tensor from doubles (each rounded once).
inline Tensor float_matrix(const std::vector<double>& v, int64_t rows, int64_t cols) {
  Tensor z(DType::kFloat, {rows, cols});
  for (size_t k = 0; k < v.size(); ++k) z.data<float>()[k] = static_cast<float>(v[k]);
  return z;
}

}  // namespace onnxdbg::reference
