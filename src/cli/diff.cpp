// `onnxdbg diff A.onnx B.onnx`: the structural difference between two models, summary first;
// --html also writes the viewer page of A with the diff painted on it (merged or side by side).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "diff/diff.h"
#include "report/table.h"

namespace onnxdbg::cli {

namespace {

struct DiffArgs {
  std::string a, b;
  bool json = false;
  HtmlOutput html;
};

// The page of A with the diff against B, written before the report so its note comes first.
Status write_diff_html(const DiffArgs& args, const LoadedModel& a, const LoadedModel& b,
                       const ModelDiff& d) {
  report::ViewerOverlays ov;
  ov.diff = d;
  ov.diff_model = &b;
  return write_html_view(args.html, a, std::move(ov), std::cerr);
}

int diff_command(const DiffArgs& args) {
  auto a = load_model(args.a);
  if (!a) return report_error(a.status());
  auto b = load_model(args.b);
  if (!b) return report_error(b.status());
  auto d = diff_models(*a, *b);
  if (!d) return report_error(d.status());
  if (Status st = write_diff_html(args, *a, *b, *d); !st) return report_error(st);
  if (args.json) {
    nlohmann::json j;
    j["summary"] = d->summary;
    j["identical"] = d->identical();
    j["only_in_a"] = d->only_in_a;
    j["only_in_b"] = d->only_in_b;
    j["changed"] = nlohmann::json::array();
    for (const auto& c : d->changed) j["changed"].push_back({{"node", c.item}, {"what", c.what}});
    j["graph"] = nlohmann::json::array();
    for (const auto& c : d->graph_changes) j["graph"].push_back({{"item", c.item}, {"what", c.what}});
    j["matched_by_name"] = d->matched_by_name;
    j["matched_by_position"] = d->matched_by_position;
    std::cout << j.dump(2) << "\n";
    return d->identical() ? kExitOk : kExitMismatch;
  }
  std::cout << d->summary << "\n";
  auto list = [](const std::string& title, const std::vector<std::string>& names) {
    if (names.empty()) return;
    std::cout << "\n" << title << " (" << names.size() << "):\n";
    const size_t shown = std::min<size_t>(names.size(), 50);
    for (size_t i = 0; i < shown; ++i) std::cout << "  " << names[i] << "\n";
    if (shown < names.size()) std::cout << "  ... and " << names.size() - shown << " more (--json lists all)\n";
  };
  list("nodes only in " + d->a_name, d->only_in_a);
  list("nodes only in " + d->b_name, d->only_in_b);
  auto table = [](const std::string& title, const std::vector<DiffChange>& changes, const char* head) {
    if (changes.empty()) return;
    std::cout << "\n" << title << ":\n";
    report::Table t({head, "difference"});
    for (const auto& c : changes) t.add_row({c.item, c.what});
    t.print(std::cout);
  };
  table("changed nodes", d->changed, "node");
  table("graph", d->graph_changes, "item");
  std::cout << "\n" << d->matched_by_name << " nodes matched by name, " << d->matched_by_position
            << " by op type and position\n";
  return d->identical() ? kExitOk : kExitMismatch;
}

}  // namespace

void add_diff_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand("diff", "Show the structural difference between two models.");
  cmd->add_option("a", args->a, "First model (A)")->required();
  cmd->add_option("b", args->b, "Second model (B)")->required();
  cmd->add_flag("--json", args->json,
                "Print one JSON object: summary, identical, only_in_a, only_in_b, changed, graph");
  add_html_option(cmd, args->html,
                  "the diff painted on A: nodes only in A or B in their own colours, changed "
                  "nodes marked, the summary on top");
  add_diff_layout_option(cmd, args->html);
  cmd->footer("Exit status: 0 when the models are the same, 1 when they differ, 2 on an error.");
  cmd->callback([args, &ctx] { ctx.exit_code = diff_command(*args); });
}

}  // namespace onnxdbg::cli
