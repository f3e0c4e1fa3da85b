// onnxdbg::api::diff: the structural difference between two models (`onnxdbg diff`), as one call
// with one result and its renderings (JSON, text, the viewer overlay).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "onnxdbg/common.h"
#include "onnxdbg/model.h"
#include "onnxdbg/model_diff.h"
#include "onnxdbg/viewer_overlays.h"

namespace onnxdbg::api {

struct DiffOptions {
  std::filesystem::path a, b;  ///< the two models (A is the one the viewer draws)
};

struct DiffResult {
  Model a, b;
  ModelDiff diff;  ///< summary, nodes only in A/B, changed nodes, graph changes
  Messages messages;
};

/// Diffs options.a against options.b. Errors: those of load_model for either file.
Expected<DiffResult> diff(const DiffOptions& options);

/// The JSON `onnxdbg diff --json` prints: summary, identical, only_in_a, only_in_b, changed
/// [{node, what}], graph [{item, what}], matched_by_name, matched_by_position.
nlohmann::json to_json(const DiffResult& result);
/// The text `onnxdbg diff` prints (node lists cut at 50; --json lists all).
void print_text(const DiffResult& result, std::ostream& os);
/// The viewer's overlay: the diff painted on A (B's nodes added; the overlay shares B).
report::ViewerOverlays diff_overlays(const DiffResult& result);

}  // namespace onnxdbg::api
