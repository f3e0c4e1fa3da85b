// Private to the layerwise module: the small models it builds from parts of the main graph (the
// nodes to isolate, the repro's node alone), and what they need to know about the graph (which
// values a node reads, which come from Constant nodes, where external data lives).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/onnx.h"
#include "model/graph.h"
#include "model/model.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "reference/interpreter.h"

namespace onnxdbg {
struct LayerwiseReport;
}

namespace onnxdbg::layerwise_detail {

/// `model` with its main graph's nodes in the order the reference interpreter runs them (a
/// topological order, model/graph.h's topological_order): `model` itself when its file order is
/// one already, or when the nodes form a cycle (the reference then reports it); else a copy
/// sorted into `sorted`. The layerwise pass and its repro work on it, so node indices, the order
/// of the tensors and the prefixes the reference runs agree with one another.
const LoadedModel& in_run_order(const LoadedModel& model, std::optional<LoadedModel>& sorted);

/// `model` as the layerwise pass runs it on `inputs`: each If replaced by the branch it takes and
/// each Loop unrolled (surgeon::inline_taken_branches, recorded in `rep` when given; when that
/// fails they stay and `rep->control_flow_notes` says why), then in run order (in_run_order).
/// Returns `model` itself when neither changes anything, else the copy held in `copy`. The pass and
/// its repro both call it, so their node indices agree.
const LoadedModel& as_run(const LoadedModel& model, const TensorMap& inputs,
                          const reference::InterpreterOptions& options,
                          std::optional<LoadedModel>& copy, LayerwiseReport* rep);

/// Outputs of the Constant nodes (default domain) of `g`: model data, not compared, and given to
/// isolated nodes as initializers.
std::set<std::string> constant_node_outputs(const onnx::GraphProto& g);

/// Adds to `names` the values whose golden copies a node needs alone: what it reads, except
/// initializers that are not also given in `inputs`, and its non-empty outputs.
void add_golden_names(const onnx::NodeProto& node, const std::set<std::string>& initializers,
                      const TensorMap& inputs, std::set<std::string>* names);

/// Moves out of `golden` the values that are outputs of Constant nodes (`constant_outputs`) and
/// not given in `inputs`, and returns them: they become initializers of the node models.
TensorMap take_constants(TensorMap& golden, const std::set<std::string>& constant_outputs,
                         const TensorMap& inputs);

/// Names `vi` and gives it tensor type `dtype` (ONNX element type), with `shape` when not null.
void set_tensor_type(onnx::ValueInfoProto* vi, const std::string& name, DType dtype,
                     const Shape* shape);

/// The model of `nodes` (main-graph indices of `model`), each reading golden values: initializers
/// stay initializers (external data read in), `constants` become initializers, every other read
/// value becomes a graph input typed from `values`. Outputs are typed from `values` (their shapes
/// too when `output_shapes`) and renamed with `rename` (identity for a repro model).
/// Errors: kInvalidArgument for an index out of range; kInternal for a read value with no golden
/// value; kModelError for unreadable initializers.
Expected<onnx::ModelProto> nodes_model(const LoadedModel& model, const std::vector<size_t>& nodes,
                                       const TensorMap& values, const TensorMap& constants,
                                       const std::function<std::string(const std::string&)>& rename,
                                       bool output_shapes);

/// Nodes in the main graph of the model at `path`; -1 when it cannot be loaded.
int64_t count_nodes(const std::filesystem::path& path);

}  // namespace onnxdbg::layerwise_detail
