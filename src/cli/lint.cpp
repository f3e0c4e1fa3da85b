// `onnxdbg lint`: structural checks of a model (ONNX checker, strict shape inference and onnxdbg's
// own rules), every finding in one pass; a table grouped by graph, or one JSON object with --json;
// --html also writes the viewer page with the findings painted on their nodes.
#include "lint/lint.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "model/model.h"
#include "report/lint_report.h"
#include "report/table.h"

namespace onnxdbg::cli {

namespace {

struct LintArgs {
  std::string model;
  std::vector<std::string> disable;
  bool json = false;
  HtmlOutput html;
};

int lint_command(const LintArgs& a) {
  lint::LintOptions opt;
  opt.disabled_rules.insert(a.disable.begin(), a.disable.end());
  auto model = load_model(a.model);
  if (!model) return report_error(model.status());
  auto findings = lint::lint_model(*model, opt);
  if (!findings) return report_error(findings.status());
  if (a.json) {
    std::cout << report::lint_report_json(*findings, a.model).dump(2) << "\n";
  } else {
    report::print_lint_report(*findings, model->path.filename().string(), std::cout,
                              report::use_color(1));
  }
  const bool errors = lint::count_findings(*findings).error > 0;
  report::ViewerOverlays ov;
  ov.lint = std::move(*findings);
  if (Status st = write_html_view(a.html, *model, std::move(ov), std::cerr); !st)
    return report_error(st);
  return errors ? kExitMismatch : kExitOk;
}

}  // namespace

void add_lint_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<LintArgs>();
  std::string rules;
  for (const auto& r : lint::rule_names()) rules += (rules.empty() ? "" : ", ") + r;
  auto* cmd = app.add_subcommand(
      "lint",
      "Check a model's structure: ONNX checker, shape inference, and every problem the "
      "checker stops before (undefined inputs, truncation, order, ops, attributes).");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--disable", args->disable, "Rule not to run (repeatable). Rules: " + rules);
  cmd->add_flag("--json", args->json, "Print one JSON object instead of tables");
  add_html_option(cmd, args->html, "the findings painted on their nodes");
  cmd->footer(
      "Exit status: 0 when no errors were found (warnings allowed), 1 when there are "
      "errors, 2 when the file cannot be read as a model or on bad usage.");
  cmd->callback([args, &ctx] { ctx.exit_code = lint_command(*args); });
}

}  // namespace onnxdbg::cli
