// Model inspection: a plain data summary of a loaded model (metadata, signature, op histogram,
// node list with attributes and nested subgraphs, weight statistics) and its text and JSON
// renderings. The summary is separate from the renderers so the HTML viewer can reuse it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "model/quantization.h"
#include "onnxdbg/model_summary.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// Parses "basic", "layers", "attrs" or "weights". Errors: kInvalidArgument for other names.
Expected<InspectOptions> inspect_options_from_mode(std::string_view mode);

/// Summarises `model`. Reads weight values (external data included) only when options.weights;
/// a weight that cannot be read gets WeightSummary::error instead of failing the summary.
/// Errors: kModelError when the model has no graph.
Expected<ModelSummary> summarize_model(const LoadedModel& model, InspectOptions options = {});

/// Human-readable report, lines under 100 columns where names allow: a header block (file,
/// IR, producer, opsets), inputs/outputs as "name  dtype  [d0, d1]", weights and node counts,
/// the op histogram, then the node list / weight table when the options asked for them.
std::string render_summary_text(const ModelSummary& s);

/// The summary as one JSON object. Keys:
///   file {name, path, size_bytes}, ir_version, producer {name, version}, domain,
///   model_version, doc_string, opset_imports [{domain, version}],
///   inputs / outputs [{name, type, shape}] with shape null when unknown, else a list of ints
///     (known dims), strings (symbolic dims) and nulls (unknown dims),
///   initializers {count, bytes, external_count}, constants {count, bytes},
///   nodes {count, count_with_subgraphs, subgraph_count},
///   op_histogram [{op_type, count}], warnings [string], mode {layers, attributes, weights},
///   graph (only with layers) {name, node_count, nodes [{index, name, op_type, domain, inputs,
///     outputs, attributes? [{name, type, value}], subgraphs [{attribute, graph}]}]},
///   weights (only with weights) [{name, source, dtype, shape [int], bytes, external, min, max,
///     mean, std (null without stats), nan_count, inf_count, error?}],
///   tensors (only with tensors) [{name, type, shape, producer, quantization}] (shape as for
///     inputs; type "?" when inference could not tell; quantization null, or {op_type, scale,
///     zero_point (numbers, null when not one inline value), scale_tensor, zero_point_tensor,
///     scale_count}), tensors_error (string, only with tensors).
nlohmann::json summary_to_json(const ModelSummary& s);

}  // namespace onnxdbg
