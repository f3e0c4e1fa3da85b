// Rule unknown_op: an op type that does not exist in its domain, for the domains ONNX defines
// (ai.onnx, ai.onnx.ml, ai.onnx.training, ai.onnx.preview.training), with a spelling hint. Other
// (custom) domains cannot be checked: one info per domain says so. Nodes of model-local functions
// are checked too: a function body calling an op that exists nowhere fails wherever it is called.
#include <algorithm>
#include <map>

#include "lint/converter_ops.h"
#include "lint/rule.h"

namespace onnxdbg::lint {

void lint_unknown_op(RuleContext& ctx, const GraphInfo& main) {
  struct Custom {
    int64_t nodes = 0;
    std::vector<std::string> ops;
  };
  std::map<std::string, Custom> custom;
  const auto& histories = op_histories();
  for (const auto& g : ctx.graphs()) {
    for (int64_t i = 0; i < g->node_count(); ++i) {
      const auto& n = g->node(i);
      if (ctx.is_local_function(n)) continue;
      const std::string domain = canonical_domain(n.domain());
      if (newest_known_opset(domain) <= 0) {
        auto& c = custom[domain];
        ++c.nodes;
        if (std::find(c.ops.begin(), c.ops.end(), n.op_type()) == c.ops.end())
          c.ops.push_back(n.op_type());
        continue;
      }
      // A known domain may have no ops in this build (ai.onnx.training in ONNX 1.12).
      static const std::map<std::string, OpHistory> kNoOps;
      auto dit = histories.find(domain);
      const auto& ops = dit == histories.end() ? kNoOps : dit->second;
      if (ops.count(n.op_type())) continue;
      // TensorFlow's name of an ONNX op: a converter's leftover, which unconverted_op reports.
      if (domain.empty() && onnx_counterpart_of_tf_op(n.op_type())) continue;
      const SchemaLookup l = ctx.lookup(n);
      std::string msg = "'" + n.op_type() + "' is not an op of " + domain_display(domain);
      std::vector<std::string> names;
      names.reserve(ops.size());
      for (const auto& [op, h] : ops) names.push_back(op);
      const auto hint = closest_name(n.op_type(), names);
      if (l.beyond_known) {
        msg += " known to this ONNX build (it knows opset " + std::to_string(l.checked_opset) +
               ", the model imports " + std::to_string(l.opset) + "), so it cannot be checked";
        msg += hint ? "; or did you mean '" + *hint + "'?" : ".";
        ctx.report(Severity::kWarning, *g, i, msg);
      } else {
        msg += hint ? "; did you mean '" + *hint + "'?" : ".";
        ctx.report(Severity::kError, *g, i, msg);
      }
    }
  }
  for (const auto& f : ctx.proto().functions()) {
    for (int k = 0; k < f.node_size(); ++k) {
      const auto& n = f.node(k);
      const std::string domain = canonical_domain(n.domain());
      if (ctx.is_local_function(n) || newest_known_opset(domain) <= 0) continue;
      auto dit = histories.find(domain);
      if (dit != histories.end() && dit->second.count(n.op_type())) continue;
      std::string msg = "function '" + f.name() + "' (domain '" + f.domain() + "') calls '" +
                        n.op_type() + "' in its " + RuleContext::describe(n, k) +
                        ", which is neither an op of " + domain_display(domain) +
                        " nor a function of this model";
      std::vector<std::string> names;
      if (dit != histories.end())
        for (const auto& [op, h] : dit->second) names.push_back(op);
      const auto hint = closest_name(n.op_type(), names);
      msg += hint ? "; did you mean '" + *hint + "'?" : "; define it or use an existing op.";
      ctx.report(ctx.newer_than_known() ? Severity::kWarning : Severity::kError, main, -1, msg);
    }
  }
  for (const auto& [domain, c] : custom) {
    std::string ops;
    for (size_t k = 0; k < c.ops.size() && k < 5; ++k) ops += (k ? ", " : "") + c.ops[k];
    if (c.ops.size() > 5) ops += ", ...";
    ctx.report(Severity::kInfo, main, -1,
               "domain '" + domain + "' is not an ONNX domain, so its " + std::to_string(c.nodes) +
                   " node" + (c.nodes > 1 ? "s" : "") + " (" + ops +
                   ") cannot be checked against a schema; the runtime must implement them.");
  }
}

}  // namespace onnxdbg::lint
