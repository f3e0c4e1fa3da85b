// api::view (include/onnxdbg/view.h): the model and the overlays of its HTML page.
#include "onnxdbg/view.h"

#include <fstream>
#include <sstream>

#include "diff/diff.h"
#include "lint/lint.h"
#include "report/viewer.h"

namespace onnxdbg::api {

namespace {

/// The run report from a file. Errors: a missing file, or one that is no JSON object.
Expected<nlohmann::json> read_report(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return not_found("report file '" + path.string() + "' does not exist");
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return invalid_argument("report file '" + path.string() +
                            "' is not the JSON object of `onnxdbg run --json`");
  return j;
}

/// A run of several samples: one sample's report, the one `run --html` would show (the first
/// whose outputs or layers disagree, else sample 0), with a note saying which.
nlohmann::json one_sample(nlohmann::json j, const std::string& what, Messages& messages) {
  if (!j.contains("samples") || !j["samples"].is_array() || j["samples"].empty()) return j;
  const auto& samples = j["samples"];
  size_t shown = samples.size();
  for (size_t i = 0; i < samples.size() && shown == samples.size(); ++i) {
    bool bad = report::json_string(samples[i], "verdict", "agree") != "agree";
    if (samples[i].contains("layerwise") && samples[i]["layerwise"].is_array())
      for (const auto& e : samples[i]["layerwise"])
        bad = bad || !report::json_bool(e, "pass", true);
    if (bad) shown = i;
  }
  const bool found = shown < samples.size();
  if (!found) shown = 0;
  nlohmann::json one = samples[shown];
  for (const char* key : {"model", "error_stat"})
    if (j.contains(key)) one[key] = j[key];
  add_note(messages, what + " holds " + std::to_string(samples.size()) +
                         " samples; the page shows sample " + std::to_string(shown) +
                         (found ? " (the first that disagrees)" : " (all agree)"));
  return one;
}

report::HighlightOverlay highlight_overlay(const std::vector<std::string>& nodes) {
  report::HighlightOverlay h;
  h.title = "highlighted nodes";
  h.nodes = nodes;
  h.summary = std::to_string(nodes.size()) + " node" + (nodes.size() == 1 ? "" : "s") +
              " given with --highlight-nodes";
  return h;
}

}  // namespace

Expected<ViewResult> view(const ViewOptions& o) {
  ViewResult out;
  ODB_ASSIGN_OR_RETURN(out.model, Model::load(o.model));
  if (o.run_report) {
    out.overlays.run_report = one_sample(*o.run_report, "the report", out.messages);
  } else if (!o.report_file.empty()) {
    ODB_ASSIGN_OR_RETURN(nlohmann::json j, read_report(o.report_file));
    out.overlays.run_report =
        one_sample(std::move(j), "'" + o.report_file.string() + "'", out.messages);
  }
  if (!o.diff.empty()) {
    ODB_ASSIGN_OR_RETURN(out.overlays.diff_model, Model::load(o.diff));
    ODB_ASSIGN_OR_RETURN(out.overlays.diff,
                         diff_models(out.model.loaded(), out.overlays.diff_model.loaded()));
    out.overlays.diff_layout = o.diff_layout;
  }
  if (o.lint) {
    ODB_ASSIGN_OR_RETURN(out.overlays.lint, lint::lint_model(out.model.loaded()));
  }
  if (!o.highlight.empty()) out.overlays.highlight = highlight_overlay(o.highlight);
  return out;
}

Status write_html(const ViewResult& result, const std::filesystem::path& path) {
  return report::write_viewer_html(result.model.loaded(), result.overlays, path.string());
}

Status write_page(const Model& model, const report::ViewerOverlays& overlays,
                  const std::filesystem::path& path) {
  return report::write_viewer_html(model.loaded(), overlays, path);
}

bool viewer_has_layout_library() { return report::viewer_has_layout_library(); }

}  // namespace onnxdbg::api
