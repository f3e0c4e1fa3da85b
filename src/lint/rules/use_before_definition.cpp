// Rule use_before_definition: a node that reads a value produced by a later node (or by itself).
// ONNX requires nodes in topological order (IR spec "Graphs"); the checker reports only the first
// violation, this lists every one. Uses inside subgraphs count as uses by the owning node. The fix,
// `surgeon sanitize --toposort`, is named only when sorting a copy leaves no lint error.
#include "lint/fixes.h"
#include "lint/rule.h"

namespace onnxdbg::lint {

namespace {

// How to put the nodes in order: the text inside the message's parentheses.
std::string order_fix(RuleContext& ctx) {
  const FixTrial& t = ctx.try_fix("toposort", [](onnx::ModelProto& m) {
    auto moved = sort_nodes(m);
    return moved ? Status::ok() : moved.status();
  });
  const std::string runtimes = "ONNX Runtime and the reference sort them; ";
  if (t.works())
    return runtimes + "`" + ctx.surgeon_command("sanitize", "--toposort", "sorted") +
           "` writes them sorted";
  if (!t.tried) return runtimes + "onnxdbg surgeon sanitize --toposort writes them sorted";
  if (!t.edit_error.empty()) return "they cannot be sorted: " + t.edit_error;
  return runtimes +
         "fix the model's other lint errors first, then onnxdbg surgeon sanitize --toposort "
         "writes them sorted (it writes no model with lint errors)";
}

}  // namespace

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
               " produces later: the nodes are not in topological order (" + order_fix(ctx) + ").";
      ctx.report(Severity::kError, g, i, msg);
    };
    for (const auto& in : n.input())
      if (!in.empty()) check(in, "reads ");
    for (const auto& in : g.implicit_inputs[static_cast<size_t>(i)])
      check(in, "its subgraph reads ");
  }
}

}  // namespace onnxdbg::lint
