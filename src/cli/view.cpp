// `onnxdbg view MODEL -o model.html`: writes the interactive HTML view of a model, optionally
// painted with the errors of a `run --json` report, a diff against a second model (merged or side
// by side), lint findings, or highlighted nodes. One self-contained file; nothing is fetched.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "diff/diff.h"
#include "lint/lint.h"
#include "model/model.h"
#include "report/viewer.h"

namespace onnxdbg::cli {

namespace {

struct ViewArgs {
  std::string model, report, diff;
  HtmlOutput page;  // -o and --diff-layout
  std::vector<std::string> highlight;
  bool lint = false;
};

int view_command(const ViewArgs& a) {
  auto model = load_model(a.model);
  if (!model) return report_error(model.status());
  report::ViewerOverlays ov;
  if (!a.report.empty()) {
    std::ifstream in(a.report);
    if (!in) return report_error(not_found("report file '" + a.report + "' does not exist"));
    std::stringstream ss;
    ss << in.rdbuf();
    auto j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return report_error(invalid_argument("report file '" + a.report +
                                           "' is not the JSON object of `onnxdbg run --json`"));
    if (j.contains("samples") && j["samples"].is_array() && !j["samples"].empty()) {
      // A run of several samples: one sample's page, the one `run --html` would show (the first
      // whose outputs or layers disagree, else sample 0).
      const auto& samples = j["samples"];
      size_t shown = samples.size();
      for (size_t i = 0; i < samples.size() && shown == samples.size(); ++i) {
        bool bad = samples[i].value("verdict", "agree") != "agree";
        if (samples[i].contains("layerwise"))
          for (const auto& e : samples[i]["layerwise"]) bad = bad || !e.value("pass", true);
        if (bad) shown = i;
      }
      const bool found = shown < samples.size();
      if (!found) shown = 0;
      nlohmann::json one = samples[shown];
      for (const char* key : {"model", "error_stat"})
        if (j.contains(key)) one[key] = j[key];
      std::cerr << "onnxdbg: note: '" << a.report << "' holds " << samples.size()
                << " samples; the page shows sample " << shown
                << (found ? " (the first that disagrees)" : " (all agree)") << "\n";
      j = std::move(one);
    }
    ov.run_report = std::move(j);
  }
  std::optional<LoadedModel> other;
  if (!a.diff.empty()) {
    auto b = load_model(a.diff);
    if (!b) return report_error(b.status());
    other = std::move(*b);
    auto d = diff_models(*model, *other);
    if (!d) return report_error(d.status());
    ov.diff = std::move(*d);
    ov.diff_model = &*other;
  }
  if (a.lint) {
    auto f = lint::lint_model(*model);
    if (!f) return report_error(f.status());
    ov.lint = std::move(*f);
  }
  if (!a.highlight.empty()) {
    report::HighlightOverlay h;
    h.title = "highlighted nodes";
    h.nodes = a.highlight;
    h.summary = std::to_string(a.highlight.size()) + " node" +
                (a.highlight.size() == 1 ? "" : "s") + " given with --highlight-nodes";
    ov.highlight = std::move(h);
  }
  if (Status st = write_html_view(a.page, *model, std::move(ov), std::cout); !st)
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
