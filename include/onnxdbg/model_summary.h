// What `onnxdbg inspect` reports about a model: its header (IR, producer, opsets), graph inputs
// and outputs, node counts and op histogram, and on request every node, weight statistics and
// every tensor's inferred type. The result type of api::inspect; src/inspect/ computes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// The quantization of one tensor: q = round(x / scale) + zero_point.
struct QuantParams {
  std::string op_type;  ///< the op that says so: "QuantizeLinear", "DequantizeLinear", ...
  std::string scale_tensor, zero_point_tensor;  ///< their names ("" for an omitted zero point)
  /// The scale and zero point when they are one-value initializers or Constant outputs; unset
  /// when they are computed (DynamicQuantizeLinear) or hold one value per channel or block.
  std::optional<double> scale, zero_point;
  int64_t scale_count = 0;  ///< elements of the scale when known (> 1: per axis or blocked)
};

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

/// One node of a graph.
struct NodeSummary {
  int64_t index = 0;  ///< position in its graph's node list
  std::string name, op_type, domain;
  std::vector<std::string> inputs, outputs;  ///< "" for an omitted optional input
  std::vector<AttributeSummary> attributes;  ///< filled when InspectOptions::attributes
  std::vector<SubgraphSummary> subgraphs;    ///< filled when InspectOptions::layers
};

/// One graph: its name, node count and (with InspectOptions::layers) its nodes.
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

/// What summarize_model (api::inspect) reports about one model.
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

}  // namespace onnxdbg
