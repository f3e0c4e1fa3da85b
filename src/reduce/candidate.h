// Candidates of a reduction: a subset of the original model's main-graph nodes plus edits
// (outputs dropped, boundary values frozen into initializers, attributes reset, weights zeroed),
// and how one becomes a standalone ONNX model whose new graph inputs read the golden values the
// original computed for them. Nothing here runs an oracle; see reducer.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "core/onnx.h"
#include "onnxdbg/status.h"

namespace onnxdbg::reduce {

/// The model being reduced and the values its tensors take, computed once.
struct Original {
  onnx::ModelProto model;          ///< after --model-input-shapes; its nodes are what is reduced
  std::filesystem::path base_dir;  ///< external data of `model` resolves here
  /// Graph-input values of each input sample (the samples are kept apart throughout).
  std::vector<TensorMap> samples;
  /// Golden values per sample: every graph input and every tensor a main-graph node produces,
  /// as the reference interpreter computed them on that sample. Empty when the reference could
  /// not run the model (`golden_error` says why); candidates then only get types, no data.
  std::vector<TensorMap> golden;
  std::string golden_error;
  /// Values of intermediate tensors the user brought (--load-inputs with layerwise data, e.g.
  /// from `onnxdbg run --save-outputs` or Polygraphy): they replace the reference's golden
  /// values of the same names for sample 0, and stand in for them when the reference cannot run
  /// the model.
  TensorMap provided;
  /// Types of main-graph values from ONNX shape inference (used where golden values are missing).
  std::unordered_map<std::string, onnx::TypeProto> inferred;
  /// --force-fallback-shape-inference: candidates carry value_info for every intermediate value,
  /// taken from the golden values, and ONNX shape inference is not used to verify them.
  bool fallback_shapes = false;
  /// Whether candidates are verified with the ONNX checker and shape inference before the oracle
  /// runs (off when the original itself fails that verification: `verify_note` says why).
  bool verify = true;
  std::string verify_note;
  /// Whether strict ONNX shape inference accepts the original (then edited candidates must pass
  /// it too; value-preserving subsets keep the original's types and skip it).
  bool infer_candidates = true;
  /// --no-reduce-inputs: a candidate reads graph inputs of the original and nothing else, and
  /// declares all of them (only the output side is cut). --no-reduce-outputs: its outputs are
  /// the graph outputs of the original, all of them (only the input side is cut).
  bool keep_inputs = false;
  bool keep_outputs = false;

  /// Facts about the main graph that every candidate build needs, computed once by
  /// prepare_original so that a build costs time in the candidate's size, not the model's.
  struct GraphIndex {
    std::vector<std::vector<std::string>> reads;  ///< per node: node_reads (model/graph.h)
    std::unordered_map<std::string, std::vector<int>> consumers;  ///< consumers (model/graph.h)
    std::unordered_map<std::string, int> initializers;            ///< name -> index
    std::unordered_set<std::string> graph_inputs, graph_outputs;
    /// Graph inputs that are not initializers, in the graph's order: what --no-reduce-inputs
    /// keeps.
    std::vector<std::string> fed_inputs;
    /// Per node: 1 when its value depends on no graph input (a Constant, or a node reading only
    /// initializers and outputs of such nodes). Such a value is never made a frontier output: a
    /// constant the failure needs is kept through the node that reads it.
    std::vector<char> constant;
    /// The outputs of those nodes: read by a candidate without their producer, they become
    /// initializers holding their golden value, never graph inputs.
    std::unordered_set<std::string> constant_values;
  } index;
};

/// One candidate, described relative to the original model (node indices into its main graph).
struct Candidate {
  std::vector<int> nodes;                 ///< kept nodes, ascending (topological order)
  std::set<std::string> dropped_outputs;  ///< candidate outputs removed (dead nodes go with them)
  std::set<std::string> frozen_inputs;    ///< boundary values baked in as initializers (sample 0)
  std::set<std::pair<int, std::string>> removed_attributes;  ///< (node, attribute) reset
  std::set<std::string> zeroed_initializers;                 ///< float weights set to 0
  /// True when every kept node computes what it computed in the original, so the reference's
  /// outputs of the candidate are the golden values of the same tensors.
  bool preserves_values() const {
    return removed_attributes.empty() && zeroed_initializers.empty();
  }
};

/// A candidate made into a model.
struct BuiltCandidate {
  onnx::ModelProto model;
  /// External data of `model` resolves here (the original's folder): candidates keep the
  /// original's references, so weights are never copied into them.
  std::filesystem::path base_dir;
  std::string bytes;                 ///< deterministic serialization of `model`
  std::string hash;                  ///< 16 hex digits of FNV-1a over `bytes` (the cache key)
  std::vector<int> nodes;            ///< nodes actually kept (dead ones removed)
  std::vector<std::string> inputs;   ///< graph inputs a caller feeds
  std::vector<std::string> outputs;  ///< graph outputs
  /// Per sample, the golden value of every graph input; empty when there are no golden values.
  std::vector<TensorMap> feeds;
  /// Per sample, the golden value of every graph output when the candidate preserves values;
  /// empty otherwise.
  std::vector<TensorMap> golden_outputs;
};

/// Makes `c` a model: kept nodes in original order; every value they read that no kept node
/// produces and that is not an initializer becomes a graph input (or, if frozen or the value of a
/// constant node with a golden value, an initializer holding its sample-0 golden value); every
/// value a kept node produces that the original graph
/// outputs or a removed node reads becomes a graph output, minus `dropped_outputs`, except the
/// value of a constant node (Original::GraphIndex::constant) that only removed nodes read; nodes
/// whose outputs then reach no graph output are removed (so no Constant or initializer is kept
/// that nothing reads). With keep_inputs the graph inputs are exactly the original's fed inputs
/// (all of them, read or not) and at least one is read; with keep_outputs the graph outputs are
/// exactly the original's. Types come from the golden values (concrete shapes) or from shape
/// inference. Initializers no kept node reads are left out.
/// Errors: kInvalidArgument (the candidate is not a model: no nodes, no outputs, a boundary
/// value whose type is unknown, a frozen value without golden data, a cut that keep_inputs or
/// keep_outputs forbids) — the reducer counts these as invalid candidates (by reason) and never
/// shows them to the oracle.
Expected<BuiltCandidate> build_candidate(const Original& original, const Candidate& c);

/// Writes `c.bytes` (the candidate's model) to `path` for an oracle that loads it from a file on
/// onnxdbg's own backends, creating the parent folder if it is missing. External references are
/// kept as they are: load it with `c.base_dir` as its external data folder (Backend::load).
/// Errors: kInvalidArgument naming the path when it cannot be written.
Status write_candidate(const BuiltCandidate& c, const std::filesystem::path& path);

/// Writes `c` as a result the user keeps (the reduced model, --min-good, --artifacts) or for a
/// --check command to read, atomically, creating the parent folder if it is missing:
/// in the original's folder it keeps its references to the original's external data; elsewhere
/// it is self-contained, its weights inline (or, over 2 GiB, in "<file>.data" beside it). See
/// save_model_with_external_data. Errors: kInvalidArgument when it cannot be written;
/// kModelError when external data cannot be read.
Status save_candidate(const BuiltCandidate& c, const std::filesystem::path& path);

/// Checks a built candidate with the ONNX checker and strict shape inference (unless the original
/// fails them too, or fallback shapes are on). Errors: kModelError with the checker's or
/// inference's first complaint.
Status verify_candidate(const Original& original, const BuiltCandidate& c);

/// The candidate holding every node of the original, unedited.
Candidate whole_model(const Original& original);

/// Attributes of `node` that its schema (at the model's opset) does not require: the ones the
/// `attributes` strategy may reset to their defaults. Empty for ops without a schema.
std::vector<std::string> optional_attributes(const onnx::ModelProto& model,
                                             const onnx::NodeProto& node);

/// Fills `original`: applies nothing to the model, runs the reference on every sample recording
/// golden values (failure is not an error: golden_error says why), overlays `provided`, infers
/// types, and decides whether candidates can be verified. Errors: kInvalidArgument when a
/// provided value names no tensor of the model; those of reading initializers.
Status prepare_original(Original& original);

}  // namespace onnxdbg::reduce
