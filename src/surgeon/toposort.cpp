// Topological reordering of nodes (model/graph.h's stable order: the original one wherever it is
// valid), applied to the main graph and every subgraph, each with its enclosing graphs' names as
// outer scope; a cycle or an undefined read leaves the model unchanged.
#include <algorithm>

#include "model/graph.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {

namespace {

Expected<int64_t> sort_graph(onnx::GraphProto& g, const std::string& path, const NameSet& outer) {
  auto order = topological_order(g, outer);
  if (!order) return std::move(order).status().with_context("while sorting graph '" + path + "'");
  int64_t moved = 0;
  for (int i = 0; i < g.node_size(); ++i) moved += (*order)[static_cast<size_t>(i)] != i;
  if (moved) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
    for (int v : *order) *sorted.Add() = std::move(*g.mutable_node(v));
    g.mutable_node()->Swap(&sorted);
  }
  if (std::none_of(g.node().begin(), g.node().end(), has_subgraph)) return moved;
  NameSet visible = outer;
  for (const auto& name : defined_names(g)) visible.insert(name);
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& node = *g.mutable_node(i);
    Status st;
    for_each_subgraph_mut(node, [&](onnx::GraphProto& sg, const std::string& attr) {
      if (!st) return;
      auto r = sort_graph(sg, subgraph_path(path, node, i, attr), visible);
      if (!r)
        st = r.status();
      else
        moved += *r;
    });
    if (!st) return st;
  }
  return moved;
}

}  // namespace

Expected<int64_t> toposort(onnx::ModelProto& model) {
  // Sort a copy so a cycle leaves the model untouched.
  onnx::GraphProto g = model.graph();
  ODB_ASSIGN_OR_RETURN(int64_t moved, sort_graph(g, "main", {}));
  if (moved) model.mutable_graph()->Swap(&g);
  return moved;
}

}  // namespace onnxdbg::surgeon
