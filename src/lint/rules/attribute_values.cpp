// Rule attribute_values: attribute values no run can use, by one table of what each op's
// attribute must hold (ONNX operator specs): Transpose's `perm` a permutation of the input's axes,
// Cast's `to` and the random ops' `dtype` a TensorProto data type, block sizes, LRN's `size`,
// `hidden_size` and group counts 1 or more. Each breaks every backend, most of them with a message
// that names no attribute.
#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "lint/rule.h"

namespace onnxdbg::lint {

namespace {

enum class Must { kPermutation, kDataType, kPositive };

struct AttributeCheck {
  const char* attribute;
  Must must;
};

// Ops of the default domain and what their attributes must hold.
const std::multimap<std::string, AttributeCheck>& checks() {
  static const std::multimap<std::string, AttributeCheck> kChecks = {
      {"Cast", {"to", Must::kDataType}},
      {"DepthToSpace", {"blocksize", Must::kPositive}},
      {"EyeLike", {"dtype", Must::kDataType}},
      {"GroupNormalization", {"num_groups", Must::kPositive}},
      {"GRU", {"hidden_size", Must::kPositive}},
      {"LRN", {"size", Must::kPositive}},
      {"LSTM", {"hidden_size", Must::kPositive}},
      {"Multinomial", {"dtype", Must::kDataType}},
      {"RandomNormal", {"dtype", Must::kDataType}},
      {"RandomNormalLike", {"dtype", Must::kDataType}},
      {"RandomUniform", {"dtype", Must::kDataType}},
      {"RandomUniformLike", {"dtype", Must::kDataType}},
      {"RNN", {"hidden_size", Must::kPositive}},
      {"SpaceToDepth", {"blocksize", Must::kPositive}},
      {"Split", {"num_outputs", Must::kPositive}},
      {"Transpose", {"perm", Must::kPermutation}},
  };
  return kChecks;
}

// ONNX's TensorProto.DataType values up to ONNX 1.23 (1 FLOAT ... 26 INT2); 0 is UNDEFINED.
constexpr int64_t kLastDataType = 26;

// "" when `perm` is a permutation of 0..n-1 with n the input's rank (when known), else why not.
std::string permutation_problem(const onnx::AttributeProto& a, const std::vector<int64_t>* dims) {
  const auto n = static_cast<int64_t>(a.ints_size());
  if (dims && static_cast<int64_t>(dims->size()) != n)
    return "has " + std::to_string(n) + " values but the input has rank " +
           std::to_string(dims->size());
  std::set<int64_t> seen;
  for (int64_t v : a.ints()) {
    if (v < 0 || v >= n)
      return "holds " + std::to_string(v) + ", outside [0, " + std::to_string(n - 1) + "]";
    if (!seen.insert(v).second) return "holds " + std::to_string(v) + " twice";
  }
  return "";
}

}  // namespace

void lint_attribute_values(RuleContext& ctx, const GraphInfo& g) {
  std::optional<ShapeIndex> shapes;  // built on the first Transpose
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    if (!canonical_domain(n.domain()).empty()) continue;
    const auto [first, last] = checks().equal_range(n.op_type());
    for (auto it = first; it != last; ++it) {
      const AttributeCheck& c = it->second;
      const auto* a = find_attribute(n, c.attribute);
      if (!a) continue;  // a missing required attribute is rule attributes' finding
      const std::string name = std::string("attribute '") + c.attribute + "' ";
      if (c.must == Must::kPermutation) {
        if (a->type() != onnx::AttributeProto::INTS) continue;
        if (!shapes) shapes.emplace(ctx, g);
        const auto* dims = n.input_size() ? shapes->find(n.input(0)) : nullptr;
        const std::string why = permutation_problem(*a, dims);
        if (!why.empty())
          ctx.report(Severity::kError, g, i,
                     fmt::format("{}{} {}; {} needs each axis of its input exactly once.", name,
                                 ints_to_string(*a), why, n.op_type()));
      } else if (a->type() == onnx::AttributeProto::INT) {
        const int64_t v = a->i();
        if (c.must == Must::kDataType && (v < 1 || v > kLastDataType))
          ctx.report(Severity::kError, g, i,
                     name + std::to_string(v) + " is not an ONNX data type (TensorProto.DataType " +
                         "1 FLOAT to " + std::to_string(kLastDataType) + ").");
        if (c.must == Must::kPositive && v < 1)
          ctx.report(Severity::kError, g, i,
                     name + std::to_string(v) + " must be 1 or more for " + n.op_type() + ".");
      }
    }
  }
}

}  // namespace onnxdbg::lint
