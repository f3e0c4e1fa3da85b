// inline_if_branch (surgeon.h): an If node of the main graph replaced by the nodes of one of its
// branches, as reduce does when a failure lives inside a branch (issue 18); and the helpers it
// shares with unroll_loop (inline_util.h).
#include <map>
#include <string>
#include <string_view>

#include "model/graph.h"
#include "surgeon/inline_util.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {
namespace inline_detail {

Expected<const onnx::NodeProto*> main_node_of(const onnx::ModelProto& model, int index,
                                              const char* op) {
  const onnx::GraphProto& main = model.graph();
  if (index < 0 || index >= main.node_size())
    return invalid_argument("no node #" + std::to_string(index) + " in the main graph");
  const onnx::NodeProto& node = main.node(index);
  if (!is_op(node, op)) {
    const bool vowel = std::string_view("AEIOU").find(op[0]) != std::string_view::npos;
    return invalid_argument(node_label(node, index) + " is not " + (vowel ? "an " : "a ") + op);
  }
  return &node;
}

void rename_outer_reads(onnx::GraphProto& graph, Renames r) {
  for (const auto& n : graph_input_names(graph)) r.erase(n);
  for (const auto& n : initializer_names(graph)) r.erase(n);
  for (const auto& node : graph.node())
    for (const auto& o : node.output()) r.erase(o);
  if (r.empty()) return;
  for (auto& node : *graph.mutable_node()) {
    for (auto& in : *node.mutable_input()) in = renamed(r, in);
    for_each_subgraph_mut(
        node, [&](onnx::GraphProto& sub, const std::string&) { rename_outer_reads(sub, r); });
  }
  for (auto& o : *graph.mutable_output()) o.set_name(renamed(r, o.name()));
}

NameSet names_in_use(const onnx::GraphProto& main, int skip) {
  NameSet taken;
  auto take = [&](const GraphVisit& v) {
    for (const auto& n : graph_input_names(*v.graph)) taken.insert(n);
    for (const auto& n : initializer_names(*v.graph)) taken.insert(n);
    for (const auto& n : v.graph->node())
      for (const auto& o : n.output()) taken.insert(o);
  };
  GraphVisit root;
  root.graph = &main;
  take(root);
  for (int i = 0; i < main.node_size(); ++i)
    if (i != skip)
      for_each_subgraph(main.node(i), [&](const onnx::GraphProto& sub, const std::string&) {
        walk_graphs(sub, take);
      });
  return taken;
}

onnx::NodeProto moved_node(const onnx::NodeProto& body_node, int index, const Renames& r,
                           const onnx::NodeProto& owner, int owner_index,
                           const std::string& attribute, const std::string& suffix) {
  onnx::NodeProto n = body_node;
  for (auto& in : *n.mutable_input()) in = renamed(r, in);
  for (auto& o : *n.mutable_output()) o = renamed(r, o);
  for_each_subgraph_mut(
      n, [&](onnx::GraphProto& sub, const std::string&) { rename_outer_reads(sub, r); });
  const std::string prefix =
      (owner.name().empty() ? owner.op_type() + "#" + std::to_string(owner_index) : owner.name()) +
      "/" + attribute + "/";
  n.set_name(prefix + (n.name().empty() ? n.op_type() + "#" + std::to_string(index) : n.name()) +
             suffix);
  return n;
}

void replace_node(onnx::GraphProto& main, int index, std::vector<onnx::NodeProto>&& nodes) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> all;
  for (int i = 0; i < main.node_size(); ++i) {
    if (i != index) {
      *all.Add() = main.node(i);
      continue;
    }
    for (auto& n : nodes) *all.Add() = std::move(n);
  }
  main.mutable_node()->Swap(&all);
}

}  // namespace inline_detail

using namespace inline_detail;

Expected<onnx::ModelProto> inline_if_branch(const onnx::ModelProto& model, int node_index,
                                            bool then_branch) {
  ODB_ASSIGN_OR_RETURN(const onnx::NodeProto* found, main_node_of(model, node_index, "If"));
  const onnx::NodeProto& node = *found;
  const std::string which = then_branch ? "then_branch" : "else_branch";
  const onnx::GraphProto* branch = nullptr;
  for (const auto& a : node.attribute())
    if (a.name() == which && a.has_g()) branch = &a.g();
  if (!branch) return model_error(node_label(node, node_index) + " has no " + which);
  if (branch->output_size() != node.output_size())
    return model_error(node_label(node, node_index) + ": its " + which + " has " +
                       std::to_string(branch->output_size()) + " outputs for the node's " +
                       std::to_string(node.output_size()));
  // Every name the main graph (or any body of its other nodes) uses, so that the branch's own
  // names can be kept apart from them; the If's own branches go with it.
  NameSet taken = names_in_use(model.graph(), node_index);
  // The branch's outputs become the If's outputs where a branch node produces them; the other
  // values it defines keep their names unless the main graph already uses them.
  NameSet produced;
  for (const auto& n : branch->node())
    for (const auto& o : n.output()) produced.insert(o);
  Renames r;
  for (int i = 0; i < branch->output_size(); ++i)
    if (produced.count(branch->output(i).name()) && !r.count(branch->output(i).name()) &&
        !node.output(i).empty())
      r[branch->output(i).name()] = node.output(i);
  // In the branch's order (node outputs, then initializers), so that fresh names do not depend on
  // a hash table's order.
  std::vector<std::string> defined_order;
  for (const auto& n : branch->node())
    for (const auto& o : n.output())
      if (!o.empty()) defined_order.push_back(o);
  for (const auto& t : branch->initializer()) defined_order.push_back(t.name());
  const NameSet defined(defined_order.begin(), defined_order.end());
  int counter = 0;
  for (const auto& n : defined_order) {
    if (r.count(n) || !taken.count(n)) continue;
    std::string fresh;
    do fresh = n + "_" + which + "_" + std::to_string(counter++);
    while (taken.count(fresh) || defined.count(fresh));
    r[n] = fresh;
    taken.insert(fresh);
  }

  onnx::ModelProto out = model;
  onnx::GraphProto* g = out.mutable_graph();
  std::vector<onnx::NodeProto> inlined;
  inlined.reserve(static_cast<size_t>(branch->node_size()));
  for (int k = 0; k < branch->node_size(); ++k)
    inlined.push_back(moved_node(branch->node(k), k, r, node, node_index, which));
  // Outputs no branch node produces (an outer value or a branch initializer): an Identity.
  for (int i = 0; i < branch->output_size(); ++i) {
    const std::string& o = branch->output(i).name();
    if (node.output(i).empty() || (produced.count(o) && renamed(r, o) == node.output(i))) continue;
    onnx::NodeProto id;
    id.set_op_type("Identity");
    id.set_name((node.name().empty() ? "If#" + std::to_string(node_index) : node.name()) + "/" +
                which + "/output_" + std::to_string(i));
    id.add_input(renamed(r, o));
    id.add_output(node.output(i));
    inlined.push_back(std::move(id));
  }
  for (const auto& init : branch->initializer()) {
    auto* t = g->add_initializer();
    *t = init;
    t->set_name(renamed(r, init.name()));
  }
  // The branch's nodes take the If's place, so the order stays topological.
  replace_node(*g, node_index, std::move(inlined));
  return out;
}

}  // namespace onnxdbg::surgeon
