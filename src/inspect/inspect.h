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
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// What summarize_model collects beyond the basics. Modes of `onnxdbg inspect --mode`:
///   basic   -> all false;  layers -> layers;  attrs -> layers + attributes;  weights -> weights.
struct InspectOptions {
  bool layers = false;      ///< every node, with subgraphs nested under their node
  bool attributes = false;  ///< node attributes (implies layers)
  bool weights = false;     ///< per-initializer and per-Constant statistics (reads all weights)
  /// Every tensor of the main graph with its dtype and shape as ONNX shape inference (with data
  /// propagation) infers them, symbolic dims by name (`inspect --show-tensors`, as Polygraphy's
  /// `inspect model --show layers` shows each layer's tensors).
  bool tensors = false;
};

/// Parses "basic", "layers", "attrs" or "weights". Errors: kInvalidArgument for other names.
Expected<InspectOptions> inspect_options_from_mode(std::string_view mode);

/// A graph input or output.
struct ValueSummary {
  std::string name;
  std::string
      type;  ///< element type name ("float32") for tensors, else "sequence(tensor(float32))"...
  bool has_shape = false;
  /// One entry per dim: the number, the symbolic name ("batch"), or "?" when unknown.
  std::vector<std::string> dims;
  /// Same dims for JSON: value >= 0 when known, -1 otherwise (dims[i] then holds the name or "?").
  std::vector<int64_t> dim_values;
};

/// One attribute, summarised for display.
struct AttributeSummary {
  std::string name;
  std::string type;   ///< "int", "ints", "float", "floats", "string", "strings", "tensor",
                      ///< "tensors", "graph", "graphs", "sparse_tensor", "type_proto", "ref"
  std::string value;  ///< short text: "[1, 1]", "0.5", "\"NOTSET\"", "float32 [3, 4]",
                      ///< "<subgraph 5 nodes>", "@attr_name" for function attribute references
};

struct GraphSummary;

/// A subgraph held by a node attribute (If's then_branch, Loop's body, Scan's body...).
struct SubgraphSummary {
  std::string attribute;  ///< name of the attribute holding it
  std::vector<GraphSummary>
      graph;  ///< exactly one element (a vector so the type may be incomplete)
};

struct NodeSummary {
  int64_t index = 0;  ///< position in its graph's node list
  std::string name, op_type, domain;
  std::vector<std::string> inputs, outputs;  ///< "" for an omitted optional input
  std::vector<AttributeSummary> attributes;  ///< filled when InspectOptions::attributes
  std::vector<SubgraphSummary> subgraphs;    ///< filled when InspectOptions::layers
};

struct GraphSummary {
  std::string name;
  int64_t node_count = 0;
  std::vector<NodeSummary> nodes;  ///< filled when InspectOptions::layers
};

/// One entry of the op-type histogram.
struct OpCount {
  std::string op_type;  ///< "Conv", or "com.microsoft.FusedConv" outside the default domain
  int64_t count = 0;
};

/// Statistics of one weight: an initializer (of any graph) or a Constant node's `value`.
struct WeightSummary {
  std::string name;    ///< initializer name, or the Constant's output name
  std::string source;  ///< "initializer" or "Constant"
  DType dtype = DType::kUndefined;
  Shape shape;
  uint64_t bytes = 0;     ///< element bytes (strings: total characters)
  bool external = false;  ///< stored in an external data file
  /// min/max/mean/std are over the finite values (NaN and Inf excluded); has_stats is false for
  /// strings, empty tensors, tensors with no finite value, and weights that could not be read.
  bool has_stats = false;
  double min = 0, max = 0, mean = 0, std = 0;  ///< std is the population standard deviation
  int64_t nan_count = 0, inf_count = 0;
  std::string error;  ///< why the values could not be read (e.g. missing external file)
};

/// A tensor of the main graph (InspectOptions::tensors): its inferred type and shape, and what
/// makes it.
struct TensorSummary {
  ValueSummary value;    ///< type "?" and has_shape false when inference could not tell
  std::string producer;  ///< "graph input", "initializer", or the producing node's label
  /// Set for a quantized tensor (model/quantization.h): its scale and zero point, as the QDQ or
  /// integer op that makes or takes it says.
  std::optional<QuantParams> quantization;
};

struct ModelSummary {
  InspectOptions options;
  std::string file_name;  ///< base name of the model file
  std::string path;
  uint64_t file_size = 0;  ///< bytes of the .onnx file itself (external data not included)
  int64_t ir_version = 0;
  std::string producer_name, producer_version, domain, doc_string;
  int64_t model_version = 0;
  std::vector<std::pair<std::string, int64_t>> opset_imports;  ///< ("ai.onnx", 13), ...
  std::vector<ValueSummary> inputs;  ///< graph inputs that are not initializers
  std::vector<ValueSummary> outputs;
  int64_t initializer_count = 0;  ///< initializers of the main graph
  uint64_t initializer_bytes = 0;
  int64_t external_initializer_count = 0;
  int64_t constant_count = 0;   ///< Constant nodes, subgraphs included
  uint64_t constant_bytes = 0;  ///< of those with a `value` tensor
  int64_t node_count = 0;       ///< nodes of the main graph
  int64_t node_count_with_subgraphs = 0;
  int64_t subgraph_count = 0;
  std::vector<OpCount> op_histogram;   ///< all nodes incl. subgraphs; by count desc, then name
  std::vector<std::string> warnings;   ///< from load_model and from summarising
  GraphSummary graph;                  ///< the main graph (nodes when options.layers)
  std::vector<WeightSummary> weights;  ///< when options.weights; initializers first, then Constants
  /// When options.tensors: graph inputs, initializers, then node outputs in node order.
  std::vector<TensorSummary> tensors;
  /// When options.tensors and shape inference stopped at an error: that error ("" otherwise);
  /// the tensors after it may lack types.
  std::string tensors_error;
};

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
