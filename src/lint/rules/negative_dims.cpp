// Rule negative_dims: a tensor stored in the model (an initializer, a sparse initializer or a
// tensor attribute such as Constant's value) with a negative dimension (ONNX IR: TensorProto.dims
// are sizes, >= 0). The ONNX checker does not look; a runtime computes a negative size from them.
#include <map>

#include "lint/rule.h"

namespace onnxdbg::lint {

namespace {

bool has_negative(const onnx::TensorProto& t) {
  for (int64_t d : t.dims())
    if (d < 0) return true;
  return false;
}

std::string dims_of(const onnx::TensorProto& t) { return stored_dims_to_string(t.dims()); }

}  // namespace

void lint_negative_dims(RuleContext& ctx, const GraphInfo& g) {
  // Initializers: reported on their first reader, so the finding names a node.
  std::map<std::string, std::string> bad;  // name -> what, for stored tensors
  for (const auto& t : g.graph->initializer())
    if (has_negative(t))
      bad.emplace(t.name(), "initializer '" + t.name() + "' has dims " + dims_of(t));
  for (const auto& s : g.graph->sparse_initializer()) {
    const std::string name = s.values().name();
    bool negative = has_negative(s.values()) || has_negative(s.indices());
    for (int64_t d : s.dims()) negative = negative || d < 0;
    if (negative)
      bad.emplace(name, "sparse initializer '" + name + "' has dims " +
                            stored_dims_to_string(s.dims()) + " (values " + dims_of(s.values()) +
                            ", indices " + dims_of(s.indices()) + ")");
  }
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    for (const auto& in : n.input()) {
      auto it = bad.find(in);
      if (it == bad.end()) continue;
      ctx.report(Severity::kError, g, i,
                 it->second + "; every dimension must be 0 or more, so fix its dims.");
      bad.erase(it);
    }
    for (const auto& a : n.attribute()) {
      if (a.has_t() && has_negative(a.t()))
        ctx.report(Severity::kError, g, i,
                   "attribute '" + a.name() + "' holds a tensor of dims " + dims_of(a.t()) +
                       "; every dimension must be 0 or more, so fix its dims.");
      for (const auto& t : a.tensors())
        if (has_negative(t)) {
          ctx.report(Severity::kError, g, i,
                     "attribute '" + a.name() + "' holds a tensor of dims " + dims_of(t) +
                         "; every dimension must be 0 or more, so fix its dims.");
          break;
        }
    }
  }
  for (const auto& [name, what] : bad)  // read by no node of this graph
    ctx.report(Severity::kError, g, -1,
               what + "; every dimension must be 0 or more, so fix its dims.");
}

}  // namespace onnxdbg::lint
