// Rule use_before_definition: a node that reads a value produced by a later node (or by itself).
// ONNX requires nodes in topological order (IR spec "Graphs"); the checker reports only the first
// violation, this lists every one. Uses inside subgraphs count as uses by the owning node.
#include "lint/rule.h"

namespace onnxdbg::lint {

void lint_use_before_definition(RuleContext& ctx, const GraphInfo& g) {
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    auto check = [&](const std::string& name, const char* how) {
      auto it = g.producer.find(name);
      if (it == g.producer.end() || it->second < i) return;  // earlier, outer, input or undefined
      const int64_t p = it->second;
      std::string msg = std::string(how) + "'" + name + "', ";
      if (p == i)
        msg += "which the node itself produces (a cycle).";
      else
        msg += "which " + RuleContext::describe(g.node(p), p) +
               " produces later: the nodes are not in topological order (ONNX Runtime and the "
               "reference sort them; `onnxdbg surgeon sanitize --toposort` writes them sorted).";
      ctx.report(Severity::kError, g, i, msg);
    };
    for (const auto& in : n.input())
      if (!in.empty()) check(in, "reads ");
    for (const auto& in : g.implicit_inputs[static_cast<size_t>(i)])
      check(in, "its subgraph reads ");
  }
}

}  // namespace onnxdbg::lint
