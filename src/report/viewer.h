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

#include "model/model.h"
#include "onnxdbg/status.h"
#include "onnxdbg/viewer_overlays.h"

namespace onnxdbg::report {

/// Fields of a run report read from a user's file: the value of `key` when `j` is an object
/// holding it with the right type, else `fallback` (a report edited by hand or from another
/// tool must not end in a JSON library exception).
std::string json_string(const nlohmann::json& j, const char* key, const std::string& fallback = "");
bool json_bool(const nlohmann::json& j, const char* key, bool fallback);

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
