// `onnxdbg view MODEL -o model.html`: writes the interactive HTML view of a model, optionally
// painted with the errors of a `run --json` report, a diff against a second model (merged or side
// by side), lint findings, or highlighted nodes. One self-contained file; nothing is fetched.
#include "onnxdbg/view.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/html_output.h"

namespace onnxdbg::cli {

namespace {

struct ViewArgs {
  std::string model, report, diff;
  HtmlOutput page;  // -o and --diff-layout
  std::vector<std::string> highlight;
  bool lint = false;
};

int view_command(const ViewArgs& a) {
  api::ViewOptions o;
  o.model = a.model;
  o.report_file = a.report;
  o.diff = a.diff;
  o.lint = a.lint;
  o.highlight = a.highlight;
  auto result = api::view(o);
  if (!result) return report_error(result.status());
  api::print_messages(result->messages, std::cerr, true);
  // write_html_view sets the diff layout from --diff-layout and prints "wrote PATH".
  if (Status st = write_html_view(a.page, result->model, std::move(result->overlays), std::cout);
      !st)
    return report_error(st);
  return kExitOk;
}

}  // namespace

void add_view_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<ViewArgs>();
  auto* cmd = app.add_subcommand(
      "view",
      "Write an interactive HTML view of a model: the graph top to bottom, shapes on the edges, "
      "search, node details; optionally errors of a run, a diff or lint findings painted on it.");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-o,--output", args->page.path, "HTML file to write")->required();
  cmd->add_option("--report", args->report,
                  "JSON of `onnxdbg run --json` (with or without --layerwise): colour nodes by "
                  "error, highlight the first divergent node; of a run of several samples, the "
                  "first sample that disagrees (sample 0 when all agree)");
  auto* diff = cmd->add_option(
      "--diff", args->diff, "Second model: nodes only in one model and changed nodes are marked");
  add_diff_layout_option(cmd, args->page)->needs(diff);
  cmd->add_flag("--lint", args->lint, "Paint lint findings on their nodes");
  cmd->add_option("--highlight-nodes", args->highlight,
                  "Nodes to highlight (comma-separated): names (any graph), or main-graph node "
                  "labels as onnxdbg prints them (\"#12 Conv 'c1'\", \"#12 Conv\" for the "
                  "unnamed 13th node); the page opens centred on the first")
      ->delimiter(',');
  cmd->footer("Exit status: 0 when the page was written, 2 on an error.");
  cmd->callback([args, &ctx] { ctx.exit_code = view_command(*args); });
}

}  // namespace onnxdbg::cli
