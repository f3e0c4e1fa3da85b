// The options and reports of model surgery (`onnxdbg surgeon`: sanitize, extract, to-fp16) and
// of the lint check every edit ends with: what api::surgeon takes and returns. src/surgeon/ makes
// the edits.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg::surgeon {

/// How constants are folded (fold_constants).
struct FoldOptions {
  /// Outputs larger than this many bytes are not folded (their producers stay); 0 = no limit.
  /// Polygraphy's --fold-size-limit.
  int64_t size_limit = 0;
};

/// What constant folding did.
struct FoldStats {
  int64_t nodes_folded = 0;           ///< nodes removed because their outputs became initializers
  int64_t subgraph_nodes_folded = 0;  ///< of those, nodes inside If/Loop/Scan bodies
  int64_t initializers_added = 0;     ///< new initializers (tensors still read by the graph)
  int64_t passes = 0;                 ///< fold + shape-inference rounds until nothing changed
  int64_t skipped_large = 0;          ///< constant nodes kept because an output exceeded size_limit
  std::vector<std::string> notes;     ///< e.g. "node 'x' (Foo) could not be evaluated: ..."
};

/// What cleanup removed.
struct CleanupStats {
  int64_t dead_nodes = 0;           ///< nodes none of whose outputs reach a graph output
  int64_t unused_initializers = 0;  ///< initializers no node, subgraph or output reads
};

/// The steps of `surgeon sanitize`, each optional.
struct SanitizeOptions {
  std::map<std::string, Shape> input_shapes;  ///< --override-input-shapes
  bool fold_constants = false;
  FoldOptions fold;
  bool cleanup = false;
  bool toposort = false;
};

/// What sanitize did, step by step.
struct SanitizeReport {
  int64_t nodes_before = 0, nodes_after = 0;
  std::vector<std::string> overridden_inputs;  ///< "x: 1x3x640x640"
  std::optional<FoldStats> fold;
  std::optional<CleanupStats> cleanup;
  std::optional<int64_t> moved_nodes;  ///< toposort
  double seconds = 0;
  /// "folded 212 nodes into 37 initializers; removed 5 dead nodes; 672 -> 423 nodes".
  std::string summary() const;
};

/// One tensor of the extracted graph's interface; dtype kUndefined / no shape mean "auto" (from
/// shape inference of the source model).
struct ExtractTensor {
  std::string name;
  DType dtype = DType::kUndefined;
  std::optional<Shape> shape;  ///< -1 dims stay dynamic
};

/// Parses Polygraphy's "name:shape:dtype" list items: "x:1x3x224x224:float32", "x:[1,3,224,224]:
/// float32", "x:auto:auto", "x" (all auto); outputs are "name" or "name:dtype". The last one or
/// two ':' separate, so names may contain ':' when both fields are given.
/// Errors: kInvalidArgument naming the bad item.
Expected<ExtractTensor> parse_extract_tensor(const std::string& item, bool is_output);

/// How `surgeon to-fp16` converts a model to float16.
struct Fp16Options {
  bool keep_io_types = false;           ///< graph inputs/outputs stay float32 with Casts inside
  std::vector<std::string> block_list;  ///< op types that keep running in float32
};

/// What the float16 conversion changed.
struct Fp16Stats {
  int64_t initializers_converted = 0;
  int64_t constants_converted = 0;  ///< Constant nodes whose float32 value became float16
  int64_t casts_inserted = 0;
  int64_t blocked_nodes = 0;
};

/// What the final check of an edit found: its lint errors (warnings and info are not counted).
struct EditCheck {
  std::vector<std::string> errors;  ///< "rule: message", "rule: graph: message" in subgraphs
  /// "the edited model has 2 lint errors: rule: message; ..." naming the first five ("" when
  /// there are none).
  std::string summary() const;
};

}  // namespace onnxdbg::surgeon
