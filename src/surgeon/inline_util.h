// Private to the surgeon module: what inline_if_branch (inline_if.cpp), unroll_loop and unroll_scan
// (taken_branches.cpp) share when they move a body's nodes into the main graph, and what to_fp16
// asks of control-flow nodes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/onnx.h"
#include "model/graph.h"
#include "onnxdbg/status.h"

namespace onnxdbg::surgeon::inline_detail {

using Renames = std::map<std::string, std::string>;

/// Whether `n` is `op` of the default domain ("" or "ai.onnx").
inline bool is_op(const onnx::NodeProto& n, const char* op) {
  return n.op_type() == op && (n.domain().empty() || n.domain() == "ai.onnx");
}

/// Main-graph node `index` of `model`, which must be a default-domain `op` (the node an edit
/// replaces). Errors: kInvalidArgument "no node #7 in the main graph" or "#2 Add 'a' is not an
/// If".
Expected<const onnx::NodeProto*> main_node_of(const onnx::ModelProto& model, int index,
                                              const char* op);

/// `name` as `r` renames it, or unchanged.
inline std::string renamed(const Renames& r, const std::string& name) {
  auto it = r.find(name);
  return it == r.end() ? name : it->second;
}

/// Renames what `graph` (a body nested in the moved body) reads from enclosing scopes: node
/// inputs and graph outputs, in it and in its own bodies, except names it defines itself (ONNX IR
/// "Scoping": a body's own inputs, initializers and node outputs shadow outer names).
void rename_outer_reads(onnx::GraphProto& graph, Renames r);

/// Every name the main graph defines, and every name a body of its nodes other than node
/// `skip` defines (at any depth): the names a value moved into the main graph must not take.
NameSet names_in_use(const onnx::GraphProto& main, int skip);

/// `body_node`, a node of the body owned by main-graph node `owner` (at `owner_index`), as a
/// main-graph node: inputs and outputs renamed by `r` (in its own bodies too) and named by its
/// path, "<owner name>/<attribute>/<node name><suffix>" (an unnamed owner or node by its op type
/// and index, "If#3", "Mul#1"; `index` is the node's index in the body).
onnx::NodeProto moved_node(const onnx::NodeProto& body_node, int index, const Renames& r,
                           const onnx::NodeProto& owner, int owner_index,
                           const std::string& attribute, const std::string& suffix = "");

/// The main graph of `model` with node `index` replaced by `nodes`, in order.
void replace_node(onnx::GraphProto& main, int index, std::vector<onnx::NodeProto>&& nodes);

}  // namespace onnxdbg::surgeon::inline_detail
