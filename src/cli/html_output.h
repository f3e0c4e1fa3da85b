// `--html PATH`, shared by the commands that can show their result in the HTML viewer (run, lint,
// diff; view writes the same page with -o): the options, the overlay of a run, and writing the
// page with a one-line note.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "onnxdbg/status.h"
#include "onnxdbg/view.h"

namespace onnxdbg::cli {

/// Where and how a command writes its page.
struct HtmlOutput {
  std::string path;                    ///< --html PATH; empty: no page
  std::string diff_layout = "merged";  ///< --diff-layout: "merged" or "side"
};

/// Adds `--html PATH` to `cmd`. `shows` ends its help: "Also write the HTML view of the model
/// (as `onnxdbg view`) with <shows>".
void add_html_option(CLI::App* cmd, HtmlOutput& out, const std::string& shows);

/// Adds `--diff-layout merged|side` to `cmd`: the layout a diff page opens with (CLI11 refuses
/// any other word with one sentence). Returns the option, so a command can require the option
/// that gives it meaning (`->needs("--diff")`).
CLI::Option* add_diff_layout_option(CLI::App* cmd, HtmlOutput& out);

/// Writes the page for `model` with `overlays` (diff layout from out.diff_layout) to out.path and
/// prints "wrote PATH" on `note` (stdout for view; stderr where stdout may carry --json). Does
/// nothing when out.path is empty. Warns on stderr when onnxdbg was built without the layout
/// library. Errors: those of report::write_viewer_html (a highlighted name that is no node,
/// a path that cannot be written), as one sentence.
Status write_html_view(const HtmlOutput& out, const Model& model, report::ViewerOverlays overlays,
                       std::ostream& note);

}  // namespace onnxdbg::cli
