// The graph toolkit: what every analysis asks of an onnx::GraphProto (who produces and who reads
// each tensor, a topological order, the names a graph reads from enclosing scopes, walks over
// nested If/Loop/Scan subgraphs), and node_label, the one way onnxdbg names a node for people.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/onnx.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

using NameSet = std::unordered_set<std::string>;

// --- naming nodes for people ----------------------------------------------------------------

/// The op type with its domain when that is not the default one: "Conv", or
/// "com.microsoft.FusedConv" ("" and "ai.onnx" are the default domain).
std::string qualified_op_type(const onnx::NodeProto& node);

/// How onnxdbg names a node wherever a person reads it (CLI, logs, messages, JSON display
/// strings, the HTML viewer): "#12 Conv '/layer1/conv1/Conv'" (its index in its graph's node
/// list, its qualified op type, its name quoted), or "#12 Conv" when it has no name; a node of
/// another domain reads "#3 com.microsoft.FusedConv 'fc'".
std::string node_label(const onnx::NodeProto& node, int64_t index);
/// The same label from its parts, for code that holds them rather than the node (`op_type` is
/// used as given: qualify it with the domain first where it has one).
std::string node_label(std::string_view name, std::string_view op_type, int64_t index);

/// The parts of a label node_label wrote: "#12 Conv 'c'" -> {12, "Conv", "c", true}.
struct NodeLabelParts {
  int64_t index = -1;
  std::string op_type;    ///< qualified op type; "" when the label had only "#12"
  std::string name;       ///< "" when the label had no quoted name
  bool has_name = false;  ///< a quoted name was present (it may be "'' ")
};
/// Reads a label of node_label's format back, also its shorter forms "#12 Conv" and "#12".
/// std::nullopt for anything else (e.g. a plain node name).
std::optional<NodeLabelParts> parse_node_label(std::string_view label);

// --- subgraphs ------------------------------------------------------------------------------

/// True when `node` has a graph attribute (If's branches, Loop's and Scan's body, ...).
bool has_subgraph(const onnx::NodeProto& node);

/// Calls fn(const onnx::GraphProto& subgraph, const std::string& attribute) for every graph
/// attribute of `node`, in attribute order; a GRAPHS attribute gives "name[0]", "name[1]", ...
template <class Fn>
void for_each_subgraph(const onnx::NodeProto& node, Fn&& fn) {
  for (const auto& a : node.attribute()) {
    if (a.has_g()) fn(a.g(), a.name());
    for (int i = 0; i < a.graphs_size(); ++i)
      fn(a.graphs(i), a.name() + "[" + std::to_string(i) + "]");
  }
}

/// for_each_subgraph over a mutable node: fn(onnx::GraphProto&, const std::string& attribute).
template <class Fn>
void for_each_subgraph_mut(onnx::NodeProto& node, Fn&& fn) {
  for (auto& a : *node.mutable_attribute()) {
    if (a.has_g()) fn(*a.mutable_g(), a.name());
    for (int i = 0; i < a.graphs_size(); ++i)
      fn(*a.mutable_graphs(i), a.name() + "[" + std::to_string(i) + "]");
  }
}

/// The path of a subgraph: `parent_path` + "/" + the owner (its name, or "If#3" when unnamed) +
/// ":" + the attribute, e.g. "main/If_3:then_branch", "main/Loop#0:body/If_1:else_branch".
/// Lint findings, the viewer and the walk below all use it.
std::string subgraph_path(std::string_view parent_path, const onnx::NodeProto& owner,
                          int64_t owner_index, std::string_view attribute);
/// The same from the owner's parts.
std::string subgraph_path(std::string_view parent_path, std::string_view owner_name,
                          std::string_view owner_op_type, int64_t owner_index,
                          std::string_view attribute);

/// One graph met by walk_graphs.
struct GraphVisit {
  const onnx::GraphProto* graph = nullptr;
  std::string path;       ///< "main" (or the root path given), "main/If_3:then_branch"
  int index = 0;          ///< preorder position in the walk; 0 is the root
  int parent = -1;        ///< index of the enclosing graph; -1 for the root
  int64_t node = -1;      ///< index, in the enclosing graph, of the node owning it; -1 for the root
  std::string attribute;  ///< "then_branch", "body", "branches[1]"; "" for the root
  int depth = 0;          ///< 0 for the root
};

namespace detail {
template <class Fn>
void walk_graphs_from(const GraphVisit& visit, int& counter, Fn& fn) {
  const onnx::GraphProto& g = *visit.graph;
  const int self = visit.index;
  const std::string path = visit.path;
  const int depth = visit.depth;
  fn(visit);
  for (int i = 0; i < g.node_size(); ++i)
    for_each_subgraph(g.node(i), [&](const onnx::GraphProto& sub, const std::string& attr) {
      GraphVisit child;
      child.graph = &sub;
      child.path = subgraph_path(path, g.node(i), i, attr);
      child.index = counter++;
      child.parent = self;
      child.node = i;
      child.attribute = attr;
      child.depth = depth + 1;
      walk_graphs_from(child, counter, fn);
    });
}
}  // namespace detail

/// Calls fn(const GraphVisit&) for `root` and then every subgraph nested in it, in preorder: a
/// graph, then for each of its nodes in order the subgraphs of each attribute in order, each
/// followed by its own subgraphs before the next. Indices follow that order.
template <class Fn>
void walk_graphs(const onnx::GraphProto& root, Fn&& fn, std::string root_path = "main") {
  GraphVisit visit;
  visit.graph = &root;
  visit.path = std::move(root_path);
  int counter = 1;
  detail::walk_graphs_from(std::move(visit), counter, fn);
}

// --- names ----------------------------------------------------------------------------------

/// Names of the graph's inputs (those backed by an initializer included).
NameSet graph_input_names(const onnx::GraphProto& graph);
/// Names of its initializers and sparse initializers.
NameSet initializer_names(const onnx::GraphProto& graph);
/// Names of its outputs.
NameSet graph_output_names(const onnx::GraphProto& graph);
/// Every name the graph itself defines: inputs, initializers, sparse initializers and node
/// outputs (empty names skipped). Not those of its subgraphs.
NameSet defined_names(const onnx::GraphProto& graph);

/// The names `graph` reads but does not define itself (see defined_names): outer-scope values
/// when it is a subgraph (ONNX's implicit inputs), undefined names when it is a main graph.
/// Reads inside nested subgraphs count, less what the graphs between define; graph outputs that
/// nothing defines count. Deduplicated, in the order of first use: per node its inputs then its
/// subgraphs' reads, then the graph outputs.
std::vector<std::string> free_names(const onnx::GraphProto& graph);

/// What `node`'s subgraphs read from the graph around it (their free names), deduplicated, in
/// attribute order; empty for a node without subgraphs.
std::vector<std::string> implicit_inputs(const onnx::NodeProto& node);

/// Every name `node` reads: its inputs (omitted optional inputs, "", skipped) then its implicit
/// inputs, each once.
std::vector<std::string> node_reads(const onnx::NodeProto& node);

/// Tensor name -> index of the node producing it (the first one, when several do), main graph
/// of `graph` only (empty names skipped).
std::unordered_map<std::string, int> producers(const onnx::GraphProto& graph);

/// Tensor name -> indices (ascending, each once) of the nodes reading it; a read from inside a
/// node's subgraphs, at any depth, counts as a read by that node (see node_reads).
std::unordered_map<std::string, std::vector<int>> consumers(const onnx::GraphProto& graph);

/// The nodes of `graph` in an order where each comes after the producers of everything it reads
/// (node_reads: subgraph reads included), keeping the file order wherever it is valid (stable
/// Kahn: the lowest ready index first). `outer` holds the names enclosing graphs define (empty
/// for a main graph). Errors: kModelError naming the nodes of one cycle, producer first ("the
/// nodes form a cycle, so no order exists: #0 Add 'a' -> #1 Relu 'b' -> #0 Add 'a'"), or the
/// first node reading a name that neither the graph nor `outer` defines ("#2 Mul reads 'q',
/// which no node, graph input, initializer or enclosing graph defines").
Expected<std::vector<int>> topological_order(const onnx::GraphProto& graph,
                                             const NameSet& outer = {});

/// Makes `node` the Cast (ONNX Cast-6 and later) of `input` to the TensorProto element type `to`
/// (onnx::TensorProto::FLOAT, FLOAT16, ...) into `output`, named `name`; whatever it held before
/// is replaced.
void make_cast_node(onnx::NodeProto& node, const std::string& name, const std::string& input,
                    const std::string& output, int32_t to);

}  // namespace onnxdbg
