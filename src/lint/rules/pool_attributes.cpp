// Rule pool_attributes: the window of MaxPool, AveragePool and LpPool (ONNX operator spec):
// kernel_shape, strides and dilations of 1 or more on every spatial axis. libonnx 1.12's shape
// inference divides by them (a SIGFPE there loses every inferred type, naming no node).
#include "lint/rule.h"
#include "lint/rules/window_attributes.h"

namespace onnxdbg::lint {

void lint_pool_attributes(RuleContext& ctx, const GraphInfo& g) {
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    if (!canonical_domain(n.domain()).empty() ||
        (n.op_type() != "MaxPool" && n.op_type() != "AveragePool" && n.op_type() != "LpPool"))
      continue;
    const Severity sev = ctx.newer_than_known() ? Severity::kWarning : Severity::kError;
    report_windows_below_one(ctx, g, i, sev, {"kernel_shape", "strides", "dilations"});
  }
}

}  // namespace onnxdbg::lint
