// Rule pool_attributes: the window of MaxPool, AveragePool and LpPool (ONNX operator spec):
// kernel_shape, strides and dilations of 1 or more on every spatial axis. libonnx 1.12's shape
// inference divides by them (a SIGFPE there loses every inferred type, naming no node).
#include "lint/rule.h"

namespace onnxdbg::lint {

void lint_pool_attributes(RuleContext& ctx, const GraphInfo& g) {
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    if (!canonical_domain(n.domain()).empty() ||
        (n.op_type() != "MaxPool" && n.op_type() != "AveragePool" && n.op_type() != "LpPool"))
      continue;
    const Severity sev = ctx.newer_than_known() ? Severity::kWarning : Severity::kError;
    for (const char* name : {"kernel_shape", "strides", "dilations"}) {
      const auto* a = find_attribute(n, name);
      if (!a) continue;
      for (int k = 0; k < a->ints_size(); ++k)
        if (a->ints(k) <= 0) {
          ctx.report(sev, g, i,
                     std::string(name) + " " + ints_to_string(*a) + " has " +
                         std::to_string(a->ints(k)) + " on spatial axis " + std::to_string(k) +
                         "; every value must be 1 or more.");
          break;
        }
    }
  }
}

}  // namespace onnxdbg::lint
