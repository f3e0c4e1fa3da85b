// api::inspect and api::lint (include/onnxdbg/inspect.h): load the model, summarise or lint it,
// and render the result for the CLI and Python alike.
#include "onnxdbg/inspect.h"

#include "inspect/inspect.h"
#include "lint/lint.h"
#include "report/lint_report.h"

namespace onnxdbg::api {

Expected<InspectResult> inspect(const InspectOptions& options) {
  ODB_ASSIGN_OR_RETURN(onnxdbg::InspectOptions io, inspect_options_from_mode(options.mode));
  io.tensors = options.show_tensors;
  ODB_ASSIGN_OR_RETURN(LoadedModel model, load_model(options.model));
  InspectResult out;
  ODB_ASSIGN_OR_RETURN(out.summary, summarize_model(model, io));
  return out;
}

nlohmann::json to_json(const InspectResult& result) { return summary_to_json(result.summary); }

void print_text(const InspectResult& result, std::ostream& os) {
  os << render_summary_text(result.summary);
}

bool LintResult::has_errors() const { return lint::count_findings(findings).error > 0; }

Expected<LintResult> lint(const LintOptions& options) {
  lint::LintOptions lo;
  lo.disabled_rules = options.disabled_rules;
  LintResult out;
  ODB_ASSIGN_OR_RETURN(out.model, Model::load(options.model));
  ODB_ASSIGN_OR_RETURN(out.findings, lint::lint_model(out.model.loaded(), lo));
  return out;
}

nlohmann::json to_json(const LintResult& result) {
  return report::lint_report_json(result.findings, result.model.path().string());
}

void print_text(const LintResult& result, std::ostream& os, bool color) {
  report::print_lint_report(result.findings, result.model.path().filename().string(), os, color);
}

std::vector<std::string> lint_rule_names() { return lint::rule_names(); }

}  // namespace onnxdbg::api
