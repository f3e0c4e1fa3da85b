// `onnxdbg diff A.onnx B.onnx`: the structural difference between two models, summary first;
// --html also writes the viewer page of A with the diff painted on it (merged or side by side).
#include "onnxdbg/diff.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "cli/options.h"

namespace onnxdbg::cli {

namespace {

struct DiffArgs {
  std::string a, b;
  bool json = false;
  HtmlOutput html;
};

int diff_command(const DiffArgs& args) {
  auto result = api::diff({args.a, args.b});
  if (!result) return report_error(result.status());
  // The page first, so its note comes before the report.
  if (Status st = write_html_view(args.html, result->a, api::diff_overlays(*result), std::cerr);
      !st)
    return report_error(st);
  if (args.json)
    print_json(api::to_json(*result));
  else
    api::print_text(*result, std::cout);
  return result->diff.identical() ? kExitOk : kExitMismatch;
}

}  // namespace

void add_diff_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand("diff", "Show the structural difference between two models.");
  cmd->add_option("a", args->a, "First model (A)")->required();
  cmd->add_option("b", args->b, "Second model (B)")->required();
  add_json_flag(cmd, args->json,
                "Print one JSON object: summary, identical, only_in_a, only_in_b, changed, graph");
  add_html_option(cmd, args->html,
                  "the diff painted on A: nodes only in A or B in their own colours, changed "
                  "nodes marked, the summary on top");
  add_diff_layout_option(cmd, args->html)->needs("--html");
  cmd->footer("Exit status: 0 when the models are the same, 1 when they differ, 2 on an error.");
  cmd->callback([args, &ctx] { ctx.exit_code = diff_command(*args); });
}

}  // namespace onnxdbg::cli
