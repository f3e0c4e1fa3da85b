// Rule version: IR version or opsets newer than the linked ONNX (1.23) knows. The model may be
// fine; lint then checks against the newest schemas it knows and reports what it cannot verify as
// warnings. Also flags an opset import that names a version 0 or below.
#include "lint/rule.h"
#include "model/model.h"

namespace onnxdbg::lint {

void lint_version(RuleContext& ctx, const GraphInfo& main) {
  const auto& m = ctx.proto();
  if (m.ir_version() > max_known_ir_version())
    ctx.report(Severity::kWarning, main, -1,
               "IR version " + std::to_string(m.ir_version()) + " is newer than the " +
                   std::to_string(max_known_ir_version()) +
                   " this ONNX build knows; checks that depend on it are warnings.");
  for (const auto& op : m.opset_import()) {
    const int64_t known = newest_known_opset(op.domain());
    if (op.version() <= 0)
      ctx.report(Severity::kError, main, -1,
                 "opset_import of domain '" + domain_display(canonical_domain(op.domain())) +
                     "' has version " + std::to_string(op.version()) + "; versions start at 1.");
    else if (known > 0 && op.version() > known)
      ctx.report(Severity::kWarning, main, -1,
                 "opset " + std::to_string(op.version()) + " of " +
                     domain_display(canonical_domain(op.domain())) + " is newer than the " +
                     std::to_string(known) +
                     " this ONNX build knows; its nodes are checked against opset " +
                     std::to_string(known) + " schemas and mismatches are only warnings.");
  }
}

}  // namespace onnxdbg::lint
