// Dead-node and unused-initializer removal, main graph and subgraphs (each from its outputs).
#include "model/graph.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {

namespace {

void clean_graph(onnx::GraphProto& g, CleanupStats& stats) {
  // Subgraphs first: their dead nodes must not keep outer values alive.
  for (auto& n : *g.mutable_node())
    for_each_subgraph_mut(
        n, [&](onnx::GraphProto& sg, const std::string&) { clean_graph(sg, stats); });

  const auto prod = producers(g);
  std::vector<bool> live(static_cast<size_t>(g.node_size()), false);
  std::unordered_set<std::string> needed;
  std::vector<std::string> work;
  auto need = [&](const std::string& name) {
    if (needed.insert(name).second) work.push_back(name);
  };
  for (const auto& o : g.output()) need(o.name());
  while (!work.empty()) {
    const std::string name = work.back();
    work.pop_back();
    auto it = prod.find(name);
    if (it == prod.end() || live[static_cast<size_t>(it->second)]) continue;
    live[static_cast<size_t>(it->second)] = true;
    for (const auto& r : node_reads(g.node(it->second))) need(r);
  }
  // A node also lives when it produces a second definition of a needed name (keep lint's
  // duplicate_output finding visible rather than hiding it).
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output())
      if (!live[static_cast<size_t>(i)] && needed.count(o) && prod.at(o) != i) {
        live[static_cast<size_t>(i)] = true;
        for (const auto& r : node_reads(g.node(i))) needed.insert(r);
      }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  std::unordered_set<std::string> exists;
  for (int i = 0; i < g.node_size(); ++i) {
    if (!live[static_cast<size_t>(i)]) {
      ++stats.dead_nodes;
      continue;
    }
    for (const auto& o : g.node(i).output()) exists.insert(o);
    *kept.Add() = std::move(*g.mutable_node(i));
  }
  g.mutable_node()->Swap(&kept);

  std::unordered_set<std::string> removed_inits;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
  for (auto& t : *g.mutable_initializer()) {
    if (!needed.count(t.name())) {
      ++stats.unused_initializers;
      removed_inits.insert(t.name());
      continue;
    }
    exists.insert(t.name());
    *inits.Add() = std::move(t);
  }
  g.mutable_initializer()->Swap(&inits);
  // Inputs that only declared a removed initializer go too; real inputs are the interface.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> ins;
  for (auto& vi : *g.mutable_input())
    if (!removed_inits.count(vi.name())) {
      exists.insert(vi.name());
      *ins.Add() = std::move(vi);
    }
  g.mutable_input()->Swap(&ins);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> vis;
  for (auto& vi : *g.mutable_value_info())
    if (exists.count(vi.name())) *vis.Add() = std::move(vi);
  g.mutable_value_info()->Swap(&vis);
}

}  // namespace

CleanupStats cleanup(onnx::ModelProto& model) {
  CleanupStats stats;
  clean_graph(*model.mutable_graph(), stats);
  return stats;
}

}  // namespace onnxdbg::surgeon
