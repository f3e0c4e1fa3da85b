// What `onnxdbg diff` finds between two models: nodes only in one, changes on matched nodes
// (op type, attributes, wiring, weights) and on graph-level items, and the node matching. The
// result type of api::diff (and of the viewer's diff overlay); src/diff/ computes it.
#pragma once

#include <string>
#include <vector>

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

/// The differences between two models, A and B (diff_models).
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

}  // namespace onnxdbg
