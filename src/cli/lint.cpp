// `onnxdbg lint`: structural checks of a model (ONNX checker, strict shape inference and onnxdbg's
// own rules), every finding in one pass; a table grouped by graph, or one JSON object with --json;
// --html also writes the viewer page with the findings painted on their nodes.
#include <iostream>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "cli/options.h"
#include "onnxdbg/inspect.h"

namespace onnxdbg::cli {

namespace {

struct LintArgs {
  std::string model;
  std::vector<std::string> disable;
  bool json = false;
  HtmlOutput html;
};

int lint_command(const LintArgs& a) {
  api::LintOptions opt;
  opt.model = a.model;
  opt.disabled_rules.insert(a.disable.begin(), a.disable.end());
  auto result = api::lint(opt);
  if (!result) return report_error(result.status());
  if (a.json)
    print_json(api::to_json(*result));
  else
    api::print_text(*result, std::cout, api::color_for(1));
  report::ViewerOverlays ov;
  ov.lint = result->findings;
  if (Status st = write_html_view(a.html, result->model, std::move(ov), std::cerr); !st)
    return report_error(st);
  return result->has_errors() ? kExitMismatch : kExitOk;
}

}  // namespace

void add_lint_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<LintArgs>();
  std::string rules;
  for (const auto& r : api::lint_rule_names()) rules += (rules.empty() ? "" : ", ") + r;
  auto* cmd = app.add_subcommand(
      "lint",
      "Check a model's structure: ONNX checker, shape inference, and every problem the "
      "checker stops before (undefined inputs, truncation, order, ops, attributes).");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--disable", args->disable, "Rule not to run (repeatable). Rules: " + rules);
  add_json_flag(cmd, args->json);
  add_html_option(cmd, args->html, "the findings painted on their nodes");
  cmd->footer(
      "Exit status: 0 when no errors were found (warnings allowed), 1 when there are "
      "errors, 2 when the file cannot be read as a model or on bad usage.");
  cmd->callback([args, &ctx] { ctx.exit_code = lint_command(*args); });
}

}  // namespace onnxdbg::cli
