// The HTML model viewer (`onnxdbg view`): one self-contained HTML file showing a model's graph top
// to bottom (laid out in the page by dagre, bundled at build time, chunk by chunk so 10,000-node
// models are interactive at once), with inferred shapes on the edges, weight statistics, and
// optional overlays: per-node errors of `run --json`, a structural diff (merged or side by side),
// lint findings, and a highlighted set of nodes (what `onnxdbg reduce` kept of the original model).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diff/diff.h"
#include "lint/lint.h"
#include "model/model.h"
#include "onnxdbg/status.h"

namespace onnxdbg::report {

/// Fields of a run report read from a user's file: the value of `key` when `j` is an object
/// holding it with the right type, else `fallback` (a report edited by hand or from another
/// tool must not end in a JSON library exception).
std::string json_string(const nlohmann::json& j, const char* key, const std::string& fallback = "");
bool json_bool(const nlohmann::json& j, const char* key, bool fallback);

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
  const LoadedModel* diff_model = nullptr;
  /// The layout the page opens with when `diff` is set (both are always in the page).
  DiffLayout diff_layout = DiffLayout::kMerged;
  /// Lint findings of the viewed model, painted on their nodes (graph-level ones listed on top).
  std::optional<std::vector<lint::Finding>> lint;
  /// Nodes to highlight (e.g. by `onnxdbg reduce`).
  std::optional<HighlightOverlay> highlight;
};

/// The model as the page's data: one JSON object with keys
///   model {file, producer, ir_version, opsets, node_count, node_count_with_subgraphs},
///   graphs [{name, path, parent (node index or -1), attribute}] (0 is the main graph; path is
///     lint's: "main", "main/If_3:then_branch"),
///   nodes [{g (graph index), x (index in its graph; in the other model's main graph for the
///     nodes only in it), n (name), o (op type), d (domain), i/u (input/output tensor
///     indices, -1 for an omitted optional input), a [[name, type, value]] attributes,
///     s [graph indices of its subgraphs], and overlays: e {err, abs, rel, own, backend, pass,
///     nan, steps [count, dtype] in a low-precision type, deq (the dequantized error of a
///     quantized tensor)} from --report, df ("a" only in the viewed model, "b" only in the other,
///     "c" changed), dw [what changed], p (index of its matched node on the other side of a diff),
///     l [[severity, rule, message]] lint findings, h (1 when highlighted)}],
///   tensors [{n (name), t (dtype or ""), s (inferred or declared shape "[1, 3, ?, ?]" or ""),
///     k ("in" graph input, "out" graph output, "w" initializer, "" otherwise), w (weight stats
///     {dtype, shape, bytes, min, max, mean, std, nan, inf, error} when an initializer or a
///     Constant's value; never the values)}],
///   report {verdict, verdict_line, atol, rtol, error_stat, first {node, tensor, backend,
///     own_error, op_type, index} (only when the result names one), worst [{index (node), backend,
///     tensor, source ("own" | "inherited" | null)}] (ranked as the CLI ranks them, failing
///     nodes only), layerwise, colour_basis ("own" | "total" | "outputs")} with --report,
///   diff {summary, a, b, only_in_a, only_in_b, changed, graph [[item, what]], layout ("merged" |
///     "side"), side_graph} with a diff: the nodes only in the other model are in the main graph
///     (df "b", for the merged layout), and the other model whole follows as graphs of its own
///     (graph side_graph is its main graph, parent -1; its nodes and tensors come after the viewed
///     model's and never share a tensor index with them; df "b" / "c" and p as above),
///   lint {counts {error, warning, info}, model_findings [[severity, rule, graph, message]]},
///   highlight {title, summary, nodes [node indices, in the order given]} with a highlight.
/// Shapes come from ONNX shape inference (libonnx, run on a copy without weight values; a model
/// it rejects keeps its declared shapes). Weight values are summarised (min, max, mean, std,
/// NaN/Inf counts), never embedded. Errors: kModelError when the model (or the diffed one) has no
/// graph; kInvalidArgument when a highlighted node name matches no node ("highlighted node 'x' is
/// not a node of model.onnx").
Expected<nlohmann::json> viewer_data(const LoadedModel& model, const ViewerOverlays& overlays = {});

/// The whole page: the HTML template, its CSS and JavaScript, the dagre layout library (MIT,
/// from npm, embedded at build time) and `data` (viewer_data's object) as JSON inside a
/// <script type="application/json"> block, with every '<', '>' and '&' escaped as \u003c etc.
/// so no model name can close the block. Needs no network and no server.
std::string render_viewer_html(const nlohmann::json& data);

/// viewer_data then render_viewer_html, written to `path`. Errors: those of viewer_data;
/// kInvalidArgument when `path` cannot be written.
Status write_viewer_html(const LoadedModel& model, const ViewerOverlays& overlays,
                         const std::string& path);

/// True when the layout library was found at build time (third_party/dagre); without it the page
/// shows an error instead of the graph.
bool viewer_has_layout_library();

}  // namespace onnxdbg::report
