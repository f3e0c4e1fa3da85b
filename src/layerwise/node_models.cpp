// The models the layerwise pass builds from parts of the main graph (see node_models.h), and
// single_node_model, the repro's model of one node (layerwise.h).
#include "layerwise/node_models.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "layerwise/layerwise.h"

namespace onnxdbg {
namespace layerwise_detail {
namespace fs = std::filesystem;

const LoadedModel& in_run_order(const LoadedModel& model, std::optional<LoadedModel>& sorted) {
  const auto& g = model.proto.graph();
  const std::vector<std::string> free = free_names(g);
  auto order = topological_order(g, NameSet(free.begin(), free.end()));
  if (!order) return model;
  bool in_order = true;
  for (size_t i = 0; i < order->size() && in_order; ++i)
    in_order = (*order)[i] == static_cast<int>(i);
  if (in_order) return model;
  sorted.emplace();
  sorted->path = model.path;
  sorted->base_dir = model.base_dir;
  sorted->warnings = model.warnings;
  sorted->proto = model.proto;
  auto* nodes = sorted->proto.mutable_graph()->mutable_node();
  nodes->Clear();
  for (int i : *order) *nodes->Add() = g.node(i);
  return *sorted;
}

const LoadedModel& as_run(const LoadedModel& model, const TensorMap& inputs,
                          const reference::InterpreterOptions& options,
                          std::optional<LoadedModel>& copy, LayerwiseReport* rep) {
  const LoadedModel* m = &model;
  const auto& nodes = model.proto.graph().node();
  const bool has_control_flow =
      std::any_of(nodes.begin(), nodes.end(), [](const onnx::NodeProto& n) {
        return (n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan") &&
               (n.domain().empty() || n.domain() == "ai.onnx");
      });
  if (has_control_flow) {
    auto flat = surgeon::inline_taken_branches(model.proto, model.base_dir, inputs, options);
    if (!flat) {
      if (rep)
        rep->control_flow_notes.push_back(
            "the If and Loop nodes were compared as whole nodes (the values inside them were "
            "not): they could not be inlined: " +
            flat.status().message());
    } else {
      const bool changed = !flat->taken.empty();
      if (rep) {
        rep->taken_branches = std::move(flat->taken);
        for (const auto& k : flat->kept)
          rep->control_flow_notes.push_back("compared as a whole node: " + k);
      }
      if (changed) {
        copy.emplace();
        copy->path = model.path;
        copy->base_dir = model.base_dir;
        copy->warnings = model.warnings;
        copy->proto = std::move(flat->model);
        m = &*copy;
      }
    }
  }
  std::optional<LoadedModel> sorted;
  in_run_order(*m, sorted);
  if (sorted) copy = std::move(sorted);
  return copy ? *copy : model;
}

std::set<std::string> constant_node_outputs(const onnx::GraphProto& g) {
  std::set<std::string> out;
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.domain().empty())
      for (const auto& o : n.output()) out.insert(o);
  return out;
}

void add_golden_names(const onnx::NodeProto& node, const std::set<std::string>& initializers,
                      const TensorMap& inputs, std::set<std::string>* names) {
  for (const auto& n : node_reads(node))
    if (!initializers.count(n) || inputs.count(n)) names->insert(n);
  for (const auto& o : node.output())
    if (!o.empty()) names->insert(o);
}

TensorMap take_constants(TensorMap& golden, const std::set<std::string>& constant_outputs,
                         const TensorMap& inputs) {
  TensorMap constants;
  for (auto it = golden.begin(); it != golden.end();) {
    if (constant_outputs.count(it->first) && !inputs.count(it->first)) {
      constants[it->first] = std::move(it->second);
      it = golden.erase(it);
    } else {
      ++it;
    }
  }
  return constants;
}

void set_tensor_type(onnx::ValueInfoProto* vi, const std::string& name, DType dtype,
                     const Shape* shape) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dtype));
  if (shape) {
    auto* s = tt->mutable_shape();
    for (int64_t d : *shape) s->add_dim()->set_dim_value(d);
  }
}

Expected<onnx::ModelProto> nodes_model(const LoadedModel& model, const std::vector<size_t>& nodes,
                                       const TensorMap& values, const TensorMap& constants,
                                       const std::function<std::string(const std::string&)>& rename,
                                       bool output_shapes) {
  const auto& g = model.proto.graph();
  onnx::ModelProto m;
  m.set_ir_version(model.proto.ir_version());
  *m.mutable_opset_import() = model.proto.opset_import();
  m.set_producer_name("onnxdbg layerwise");
  auto* mg = m.mutable_graph();
  mg->set_name(nodes.size() == 1 ? "onnxdbg_node" : "onnxdbg_isolated_nodes");
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer()) inits[t.name()] = &t;
  std::set<std::string> declared;
  for (size_t idx : nodes) {
    if (idx >= static_cast<size_t>(g.node_size()))
      return invalid_argument(fmt::format("node index {} is out of range", idx));
    const auto& node = g.node(static_cast<int>(idx));
    for (const auto& name : node_reads(node)) {
      if (!declared.insert(name).second) continue;
      auto v = values.find(name);
      auto init = inits.find(name);
      auto c = constants.find(name);
      if (v == values.end() && init != inits.end()) {
        ODB_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(*init->second, model.base_dir));
        *mg->add_initializer() = tensor_to_proto(t, name);
      } else if (v == values.end() && c != constants.end()) {
        *mg->add_initializer() = tensor_to_proto(c->second, name);
      } else if (v != values.end()) {
        set_tensor_type(mg->add_input(), name, v->second.dtype(), &v->second.shape());
      } else {
        return internal_error(
            fmt::format("no golden value for '{}', read by node {}", name, node_label(node, idx)));
      }
    }
    auto* copy = mg->add_node();
    *copy = node;
    for (int i = 0; i < copy->output_size(); ++i) {
      const std::string& out = node.output(i);
      if (out.empty()) continue;
      copy->set_output(i, rename(out));
      auto v = values.find(out);
      if (v == values.end()) continue;  // an output nobody reads and we do not compare
      set_tensor_type(mg->add_output(), rename(out), v->second.dtype(),
                      output_shapes ? &v->second.shape() : nullptr);
    }
  }
  return m;
}

int64_t count_nodes(const fs::path& path) {
  auto m = load_model(path);
  return m ? m->proto.graph().node_size() : -1;
}

}  // namespace layerwise_detail

Expected<onnx::ModelProto> single_node_model(const LoadedModel& model, size_t node_index,
                                             const TensorMap& constants,
                                             const std::map<std::string, Tensor>& values) {
  return layerwise_detail::nodes_model(
      model, {node_index}, values, constants, [](const std::string& n) { return n; }, true);
}

}  // namespace onnxdbg
