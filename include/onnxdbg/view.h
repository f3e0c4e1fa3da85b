// onnxdbg::api::view: the interactive HTML view of a model (`onnxdbg view`), optionally painted
// with a run's errors (the JSON of `run --json`), a diff against a second model, lint findings
// or highlighted nodes. One self-contained page; nothing is fetched when it opens.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "onnxdbg/common.h"
#include "onnxdbg/model.h"
#include "onnxdbg/viewer_overlays.h"

namespace onnxdbg::api {

struct ViewOptions {
  std::filesystem::path model;
  /// The object `onnxdbg run --json` printed (with or without --layerwise), or a file holding
  /// it (`report_file`); of a run of several samples the page shows the first sample that
  /// disagrees (sample 0 when all agree).
  std::optional<nlohmann::json> run_report;
  std::filesystem::path report_file;
  std::filesystem::path diff;  ///< a second model: nodes only in one and changed nodes marked
  report::DiffLayout diff_layout = report::DiffLayout::kMerged;
  bool lint = false;                   ///< paint lint findings on their nodes
  std::vector<std::string> highlight;  ///< node names to highlight (any graph)
};

struct ViewResult {
  Model model;
  report::ViewerOverlays overlays;
  Messages messages;
};

/// Loads the model(s) and builds the overlays. Errors: those of load_model; kNotFound for a
/// report file that does not exist; kInvalidArgument for one that is not the JSON object of
/// `run --json`; those of diff_models and lint_model.
Expected<ViewResult> view(const ViewOptions& options);

/// Writes the page to `path`. Errors: those of report::write_viewer_html (a highlighted name
/// that is no node, a path that cannot be written).
Status write_html(const ViewResult& result, const std::filesystem::path& path);

/// Writes the page of `model` painted with `overlays` to `path`: what every command's --html
/// writes (its result's overlays: run_overlays, a lint's findings, a diff). Errors: those of the
/// page writer (a path that cannot be written).
Status write_page(const Model& model, const report::ViewerOverlays& overlays,
                  const std::filesystem::path& path);

/// Whether this build embeds the graph layout library (dagre, scripts/install-deps.sh); without
/// it a page lists the nodes but cannot draw the graph.
bool viewer_has_layout_library();

}  // namespace onnxdbg::api
