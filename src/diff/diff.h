// Structural difference between two ONNX models: nodes matched by name, then by op type and
// position; nodes only in one model; changed op types, attributes, input wiring; initializers
// (dtype, shape, value statistics); graph inputs and outputs; opset imports. A one-sentence
// summary leads ("B lacks 37 nodes downstream of #12 Conv '/backbone/stage4'; its output 'pos'
// is produced by no node"). Nodes are named with node_label (model/graph.h).
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

/// One difference on a matched node or a graph-level item.
struct DiffChange {
  /// node_label of A's node ("#12 Conv 'c1'"; inside a subgraph prefixed by its path,
  /// "main/If_0:then_branch/#3 Conv 'c'"), or "initializer 'w'", "input 'x'"
  std::string item;
  std::string what;  ///< one phrase: "op type Conv -> ConvTranspose", "attribute group 1 -> 2"
  /// Index of A's main-graph node the change is on (for a change inside a subgraph, the node
  /// owning it); -1 for graph-level items.
  int64_t node = -1;
  /// The graph the change is in: "main", or a subgraph's path ("main/If_0:then_branch").
  std::string graph = "main";
};

struct ModelDiff {
  std::string a_name, b_name;          ///< file names for messages
  std::vector<std::string> only_in_a;  ///< node_label of each main-graph node only in A
  std::vector<std::string> only_in_b;
  std::vector<DiffChange> changed;        ///< changes on matched nodes
  std::vector<DiffChange> graph_changes;  ///< inputs, outputs, initializers, opsets, IR version
  int matched_by_name = 0;
  int matched_by_position = 0;
  /// For each node of A's main graph (by index), the index of the B node it matched, or -1 when
  /// it is only in A; b_to_a the other way round.
  std::vector<int> a_to_b;
  std::vector<int> b_to_a;
  std::string summary;  ///< one sentence, printed first
  bool identical() const {
    return only_in_a.empty() && only_in_b.empty() && changed.empty() && graph_changes.empty();
  }
};

/// Compares the main graphs of `a` and `b`, and the subgraphs (If's branches, Loop's and Scan's
/// bodies, nested ones too) of each matched node pair the same way: their nodes are matched, and
/// their changes (nodes only on one side, op types, attributes, wiring, initializers, inputs and
/// outputs) go to `changed`, named by path ("main/If_0:then_branch/#3 Conv 'c'", subgraph_path)
/// and recorded on the main-graph node that owns the subgraph. Initializer values and tensor
/// attributes (Constant's value) are read (external data included) to give how many values differ
/// and the max absolute difference where dtype and shape agree. Errors: kModelError when an
/// initializer cannot be read.
Expected<ModelDiff> diff_models(const LoadedModel& a, const LoadedModel& b);

}  // namespace onnxdbg
