// What the HTML model viewer paints on a model's graph besides the model itself: a run report's
// errors per node, a diff against a second model, lint findings, a highlighted set of nodes.
// What api::view builds and every command's --html writes (run_overlays, diff_overlays,
// reduce_overlays); src/report/viewer.h draws it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "onnxdbg/findings.h"
#include "onnxdbg/model.h"
#include "onnxdbg/model_diff.h"

namespace onnxdbg::report {

/// A set of nodes of the viewed model to point at, with a label: e.g. the nodes a reduced model
/// kept, shown inside the original. Drawn with a violet halo, listed under `title` in the side
/// panel (each a link that centres it), `title` and `summary` on top; the page opens centred on
/// the first node (unless a run report names a first divergent node).
struct HighlightOverlay {
  std::string title;    ///< a few words, e.g. "reduced model"; empty gives "highlighted nodes"
  std::string summary;  ///< one line, e.g. "12 of 672 nodes still make opencv disagree"
  /// Node names of the viewed model, in any graph (subgraph nodes are expanded when shown), or
  /// node labels of its main graph as onnxdbg prints them (model/graph.h's node_label: "#12 Conv
  /// 'c1'", or "#12 Conv" for the 13th node, unnamed). Duplicates are ignored; the order given is
  /// the order listed. A name that matches no node is an error (see viewer_data).
  std::vector<std::string> nodes;
};

/// How a diff is drawn when the page opens; a button in the page switches between the two.
enum class DiffLayout {
  kMerged,      ///< one graph: the viewed model plus the nodes only in the other, wired by name
  kSideBySide,  ///< the viewed model on the left, the other model whole on the right
};

/// What to paint on the graph besides the model itself. Every overlay is optional.
struct ViewerOverlays {
  /// The object printed by `onnxdbg run --json` (README "run --json"), with or without
  /// `layerwise` and `first_divergent_node`. Nodes are coloured by `own_error` where a layerwise
  /// entry has one, else by `max_abs_error`; graph outputs of the plain report colour the nodes
  /// producing them. Unknown keys are ignored.
  std::optional<nlohmann::json> run_report;
  /// Differences against a second model and that model itself (nodes only in it are added to the
  /// view, wired to the tensors of the same names). Both set or both empty.
  std::optional<ModelDiff> diff;
  Model diff_model;
  /// The layout the page opens with when `diff` is set (both are always in the page).
  DiffLayout diff_layout = DiffLayout::kMerged;
  /// Lint findings of the viewed model, painted on their nodes (graph-level ones listed on top).
  std::optional<std::vector<lint::Finding>> lint;
  /// Nodes to highlight (e.g. by `onnxdbg reduce`).
  std::optional<HighlightOverlay> highlight;
};

}  // namespace onnxdbg::report
