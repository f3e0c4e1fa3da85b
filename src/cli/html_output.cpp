// `--html PATH` for run, lint and diff (and the writing step of view): one place that adds the
// options and writes the viewer page, so every command's page is the one `onnxdbg view` writes.
#include "cli/html_output.h"

#include <iostream>

namespace onnxdbg::cli {

void add_html_option(CLI::App* cmd, HtmlOutput& out, const std::string& shows) {
  cmd->add_option("--html", out.path,
                  "Also write the HTML view of the model (as `onnxdbg view`) with " + shows +
                      "; one self-contained file");
}

CLI::Option* add_diff_layout_option(CLI::App* cmd, HtmlOutput& out) {
  return cmd
      ->add_option("--diff-layout", out.diff_layout,
                   "Layout the diff page opens with: merged (one graph, nodes only in the other "
                   "model added) or side (both models side by side); a button switches")
      ->check(CLI::IsMember({"merged", "side"}))
      ->capture_default_str();
}

Status write_html_view(const HtmlOutput& out, const Model& model, report::ViewerOverlays overlays,
                       std::ostream& note) {
  if (out.path.empty()) return Status::ok();
  overlays.diff_layout =
      out.diff_layout == "side" ? report::DiffLayout::kSideBySide : report::DiffLayout::kMerged;
  Status st = api::write_page(model, overlays, out.path);
  if (!st) return st;
  if (!api::viewer_has_layout_library())
    std::cerr << "onnxdbg: warning: built without the dagre layout library (run "
                 "scripts/install-deps.sh and rebuild); the page cannot draw the graph\n";
  note << "wrote " << out.path << "\n";
  return Status::ok();
}

}  // namespace onnxdbg::cli
