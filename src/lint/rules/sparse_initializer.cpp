// Rule sparse_initializer: a sparse initializer (ONNX IR "Sparse Tensors", SparseTensorProto)
// whose parts do not fit together: values not 1-D, indices not int64 of shape [NNZ] (linear) or
// [NNZ, rank], or an index outside its dims. Such a tensor cannot be made dense: ONNX Runtime
// refuses the model and onnxdbg's reference would write out of bounds, so these are errors.
// Indices out of order or repeated (the spec asks ascending, without duplicates) are a warning:
// runtimes that densify the tensor still read it.
#include <algorithm>

#include "core/numel.h"
#include "lint/rule.h"
#include "model/model.h"

namespace onnxdbg::lint {

namespace {

std::string dims_text(const google::protobuf::RepeatedField<int64_t>& dims) {
  std::string s = "[";
  for (int64_t d : dims) s += (s.size() > 1 ? ", " : "") + std::to_string(d);
  return s + "]";
}

// What makes `s` impossible to densify, or "" (then `unordered` says whether its indices break
// the ascending order).
std::string sparse_problem(const onnx::SparseTensorProto& s, bool& unordered) {
  for (int64_t d : s.dims())
    if (d < 0) return "";  // negative_dims reports it
  const int64_t numel = saturating_numel(s.dims());
  if (s.values().dims_size() != 1)
    return "values of dims " + dims_text(s.values().dims()) + " (they must be 1-D, [NNZ])";
  const int64_t nnz = s.values().dims(0);
  if (nnz > numel)
    return std::to_string(nnz) + " values for " + std::to_string(numel) + " elements";
  if (nnz == 0 && s.indices().dims_size() == 0) return "";
  const int64_t rank = s.dims_size();
  const auto& id = s.indices().dims();
  const bool linear = id.size() == 1 && id[0] == nnz;
  const bool coords = id.size() == 2 && id[0] == nnz && id[1] == rank;
  if (s.indices().data_type() != onnx::TensorProto::INT64 || (!linear && !coords))
    return "indices of dims " + dims_text(id) + " (they must be int64 of dims [" +
           std::to_string(nnz) + "] or [" + std::to_string(nnz) + ", " + std::to_string(rank) +
           "])";
  auto indices = tensor_from_proto(s.indices());
  if (!indices) return "indices that cannot be read: " + indices.status().message();
  const auto* v = indices->data<int64_t>();
  // Each value's index as `width` numbers (1 linear, or rank coordinates), compared with the
  // previous one lexicographically for the order (no flattening: hostile dims overflow it).
  const int64_t width = linear ? 1 : rank;
  for (int64_t k = 0; k < nnz; ++k) {
    const int64_t* at = v + k * width;
    for (int64_t j = 0; j < width; ++j) {
      const int64_t bound = linear ? numel : s.dims(static_cast<int>(j));
      if (at[j] < 0 || at[j] >= bound)
        return "index " + std::to_string(at[j]) + (linear ? "" : " on axis " + std::to_string(j)) +
               " (value " + std::to_string(k) + ") outside " +
               (linear ? "its " + std::to_string(numel) + " elements"
                       : "dims " + dims_text(s.dims()));
    }
    if (k > 0 && !std::lexicographical_compare(at - width, at, at, at + width)) unordered = true;
  }
  return "";
}

}  // namespace

void lint_sparse_initializer(RuleContext& ctx, const GraphInfo& g) {
  for (const auto& s : g.graph->sparse_initializer()) {
    bool unordered = false;
    const std::string name = s.values().name();
    const std::string problem = sparse_problem(s, unordered);
    if (!problem.empty())
      ctx.report(Severity::kError, g, -1,
                 "sparse initializer '" + name + "' of dims " + dims_text(s.dims()) + " has " +
                     problem + "; re-export the model or fix the tensor.");
    else if (unordered)
      ctx.report(Severity::kWarning, g, -1,
                 "sparse initializer '" + name +
                     "' lists its indices out of ascending order or repeats one (ONNX IR "
                     "\"Sparse Tensors\" asks for ascending indices without duplicates).");
  }
}

}  // namespace onnxdbg::lint
