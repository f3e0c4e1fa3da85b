// What a backend's session reports about itself once it has loaded a model: load time, the
// execution providers it asked for and the ones it runs on, node placement, warnings. A public
// result type: every backend run of `run`, `reduce` and `bisect_optimizers` carries one; the
// backends of src/backends/ fill it in.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace onnxdbg {

/// One node of the session's graph and the execution provider ONNX Runtime assigned it.
struct NodePlacement {
  std::string node;      ///< node name as ONNX Runtime reports it (may be empty for unnamed nodes)
  std::string op_type;   ///< e.g. "Conv"; a compiled EP subgraph lists its member nodes
  std::string provider;  ///< full provider name, e.g. "CPUExecutionProvider"
};

/// What a loaded session reports about itself.
struct SessionInfo {
  double load_seconds = 0;             ///< wall time to create the session, seconds
  std::vector<std::string> providers;  ///< execution providers the session actually uses
  std::vector<std::string> warnings;  ///< e.g. an option the backend ignored; provider_warnings too
  std::vector<std::string> output_names;  ///< in model order
  /// Execution providers asked for (onnxruntime's providers=, full names, priority order); empty
  /// for backends without providers.
  std::vector<std::string> providers_requested;
  /// Nodes of the session's graph per provider (ONNX Runtime's assignment after its basic graph
  /// optimizations); empty when the backend cannot tell.
  std::map<std::string, int64_t> provider_node_counts;
  /// Every node and the provider it was assigned (same source as provider_node_counts).
  std::vector<NodePlacement> node_placement;
  /// The warnings about providers alone (also in `warnings`): a requested provider missing,
  /// refused or silently replaced. --strict-providers turns any of them into an error.
  std::vector<std::string> provider_warnings;
  /// The graph transformers that changed the model while the session loaded, in the order they
  /// first did (onnxruntime:list_transformers=on: ONNX Runtime's "GraphTransformer <Name>
  /// modified: 1" log lines); empty when not asked for or nothing changed it.
  std::vector<std::string> transformers_applied;
};
}  // namespace onnxdbg
