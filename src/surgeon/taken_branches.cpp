// observe_control_flow, unroll_loop and inline_taken_branches (taken_branches.h): the control flow
// of a model as it ran, level by level, read from reference runs.
#include "surgeon/taken_branches.h"

#include <algorithm>
#include <optional>
#include <set>

#include "model/graph.h"
#include "surgeon/inline_util.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {
namespace {

using namespace inline_detail;

bool is_op(const onnx::NodeProto& n, const char* op) {
  return n.op_type() == op && (n.domain().empty() || n.domain() == "ai.onnx");
}

/// A node's name for people: its own, or "<op>#<index>" when it has none (model/graph.h's
/// subgraph_path does the same).
std::string owner_name(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? n.op_type() + "#" + std::to_string(index) : n.name();
}

const onnx::GraphProto* body_of(const onnx::NodeProto& n, const char* attribute) {
  for (const auto& a : n.attribute())
    if (a.name() == attribute && a.has_g()) return &a.g();
  return nullptr;
}

Expected<bool> condition_of(const onnx::NodeProto& n, int index, const Tensor& t) {
  if (t.numel() != 1 || t.dtype() == DType::kString)
    return model_error(node_label(n, index) + ": its condition '" + n.input(0) +
                       "' must be a single bool, got " + std::string(dtype_name(t.dtype())) +
                       " of shape " + shape_to_string(t.shape()));
  return t.get_as_double(0) != 0.0;
}

/// The output a copy of Loop `index` gains to count its iterations (observe_control_flow).
std::string iteration_probe(int index) { return "__onnxdbg_iterations_" + std::to_string(index); }

/// `model` with each Loop of `loops` given one more scan output, its iteration number, so that
/// the output's first dimension is the number of iterations the body ran.
onnx::ModelProto with_iteration_probes(const onnx::ModelProto& model,
                                       const std::vector<int>& loops) {
  onnx::ModelProto probe = model;
  for (int i : loops) {
    onnx::NodeProto* n = probe.mutable_graph()->mutable_node(i);
    for (auto& a : *n->mutable_attribute()) {
      if (a.name() != "body" || !a.has_g() || a.g().input_size() < 1) continue;
      onnx::GraphProto* body = a.mutable_g();
      onnx::NodeProto* id = body->add_node();
      id->set_op_type("Identity");
      id->add_input(body->input(0).name());
      id->add_output(iteration_probe(i));
      onnx::ValueInfoProto* out = body->add_output();
      out->set_name(iteration_probe(i));
      out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
      out->mutable_type()->mutable_tensor_type()->mutable_shape();
      n->add_output(iteration_probe(i));
    }
  }
  return probe;
}

onnx::NodeProto constant_node(const std::string& name, const std::string& output,
                              const Tensor& value) {
  onnx::NodeProto c;
  c.set_op_type("Constant");
  c.set_name(name);
  c.add_output(output);
  onnx::AttributeProto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = tensor_to_proto(value);
  return c;
}

onnx::NodeProto simple_node(const std::string& op, const std::string& name,
                            const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (const auto& i : inputs) n.add_input(i);
  n.add_output(output);
  return n;
}

}  // namespace

Expected<ControlFlowRun> observe_control_flow(const onnx::ModelProto& model,
                                              const std::filesystem::path& base_dir,
                                              const std::map<std::string, Tensor>& inputs,
                                              const reference::InterpreterOptions& options) {
  const onnx::GraphProto& g = model.graph();
  std::vector<int> ifs, loops;
  for (int i = 0; i < g.node_size(); ++i) {
    if (is_op(g.node(i), "If")) ifs.push_back(i);
    if (is_op(g.node(i), "Loop")) loops.push_back(i);
  }
  std::map<std::string, std::optional<Tensor>> wanted;  // value name -> its value once known
  for (int i : ifs) {
    const onnx::NodeProto& n = g.node(i);
    if (n.input_size() < 1 || n.input(0).empty())
      return model_error(node_label(n, i) + " has no condition input");
    wanted[n.input(0)];
  }
  for (int i : loops) wanted[iteration_probe(i)];
  for (auto& [name, value] : wanted)
    if (auto it = inputs.find(name); it != inputs.end()) value = it->second;
  for (const auto& init : g.initializer()) {
    auto it = wanted.find(init.name());
    if (it == wanted.end() || it->second) continue;
    ODB_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(init, base_dir));
    it->second = std::move(t);
  }
  const bool all_known =
      std::all_of(wanted.begin(), wanted.end(), [](const auto& w) { return w.second.has_value(); });
  if (!all_known) {
    ODB_ASSIGN_OR_RETURN(std::vector<int> order, topological_order(g));
    // The nodes before the last If (its condition is computed before it) and up to the last Loop
    // (its probe is its output), in the order the reference runs them.
    size_t end = 0;
    for (size_t pos = 0; pos < order.size(); ++pos) {
      const onnx::NodeProto& n = g.node(order[pos]);
      if (is_op(n, "If")) end = std::max(end, pos);
      if (is_op(n, "Loop")) end = std::max(end, pos + 1);
    }
    const onnx::ModelProto probe = with_iteration_probes(model, loops);
    ODB_ASSIGN_OR_RETURN(auto interp, reference::Interpreter::create(probe, base_dir, options));
    ODB_RETURN_IF_ERROR(interp->run_prefix(
        inputs,
        [&](const onnx::NodeProto&, size_t, const std::string& tensor, const Tensor& value) {
          auto it = wanted.find(tensor);
          if (it != wanted.end() && !it->second) it->second = value;
        },
        end));
  }
  ControlFlowRun out;
  for (int i : ifs) {
    const onnx::NodeProto& n = g.node(i);
    const auto& value = wanted[n.input(0)];
    if (!value)
      return model_error(node_label(n, i) + ": its condition '" + n.input(0) +
                         "' was not computed before it");
    ODB_ASSIGN_OR_RETURN(out.conditions[i], condition_of(n, i, *value));
  }
  for (int i : loops) {
    const auto& value = wanted[iteration_probe(i)];
    if (!value || value->shape().empty())
      return model_error(node_label(g.node(i), i) + ": its iterations were not counted");
    out.iterations[i] = value->shape()[0];
  }
  return out;
}

Expected<onnx::ModelProto> unroll_loop(const onnx::ModelProto& model, int node_index,
                                       int64_t iterations) {
  const onnx::GraphProto& main = model.graph();
  if (node_index < 0 || node_index >= main.node_size())
    return invalid_argument("no node #" + std::to_string(node_index) + " in the main graph");
  const onnx::NodeProto& node = main.node(node_index);
  if (!is_op(node, "Loop"))
    return invalid_argument(node_label(node, node_index) + " is not a Loop");
  if (iterations < 1)
    return invalid_argument("a Loop is unrolled into one iteration or more, not " +
                            std::to_string(iterations));
  const onnx::GraphProto* body = body_of(node, "body");
  if (!body) return model_error(node_label(node, node_index) + " has no body");
  const int n_carried = std::max(0, node.input_size() - 2);
  const int n_scan = node.output_size() - n_carried;
  if (n_scan < 0 || body->input_size() != 2 + n_carried ||
      body->output_size() != 1 + n_carried + n_scan)
    return model_error(node_label(node, node_index) + ": its body has " +
                       std::to_string(body->input_size()) + " inputs and " +
                       std::to_string(body->output_size()) + " outputs for the node's " +
                       std::to_string(node.input_size()) + " inputs and " +
                       std::to_string(node.output_size()) + " outputs");
  for (int j = 0; j < n_carried; ++j)
    if (node.input(2 + j).empty())
      return model_error(node_label(node, node_index) + ": its loop-carried input " +
                         std::to_string(2 + j) + " is empty");

  NameSet taken = names_in_use(main, node_index);
  auto fresh = [&](const std::string& base) {
    std::string f = base;
    for (int c = 0; taken.count(f); ++c) f = base + "_" + std::to_string(c);
    taken.insert(f);
    return f;
  };
  const std::string owner = owner_name(node, node_index);
  onnx::ModelProto out = model;
  onnx::GraphProto* g = out.mutable_graph();
  Renames lifted;  // the body's initializers, lifted once
  for (const auto& init : body->initializer()) {
    auto* t = g->add_initializer();
    *t = init;
    t->set_name(fresh(init.name()));
    lifted[init.name()] = t->name();
  }

  std::vector<onnx::NodeProto> nodes;
  std::string cond = node.input_size() > 1 ? node.input(1) : "";
  std::vector<std::string> carried;
  for (int j = 0; j < n_carried; ++j) carried.push_back(node.input(2 + j));
  std::vector<std::vector<std::string>> scans(static_cast<size_t>(n_scan));
  for (int64_t k = 0; k < iterations; ++k) {
    const std::string tag = " [iter " + std::to_string(k) + "]";
    const std::string suffix = "__iter" + std::to_string(k);
    Renames r = lifted;
    const std::string number = fresh(body->input(0).name() + suffix);
    nodes.push_back(
        constant_node(owner + "/body/iteration_num" + tag, number, Tensor::scalar<int64_t>(k)));
    r[body->input(0).name()] = number;
    if (cond.empty()) {
      cond = fresh(body->input(1).name() + suffix);
      nodes.push_back(constant_node(owner + "/body/cond" + tag, cond, Tensor::scalar<bool>(true)));
    }
    r[body->input(1).name()] = cond;
    for (int j = 0; j < n_carried; ++j)
      r[body->input(2 + j).name()] = carried[static_cast<size_t>(j)];
    for (const auto& n : body->node())
      for (const auto& o : n.output())
        if (!o.empty()) r[o] = fresh(o + suffix);
    for (int b = 0; b < body->node_size(); ++b)
      nodes.push_back(moved_node(body->node(b), b, r, node, node_index, "body", tag));
    cond = renamed(r, body->output(0).name());
    for (int j = 0; j < n_carried; ++j)
      carried[static_cast<size_t>(j)] = renamed(r, body->output(1 + j).name());
    for (int s = 0; s < n_scan; ++s)
      scans[static_cast<size_t>(s)].push_back(renamed(r, body->output(1 + n_carried + s).name()));
  }
  for (int j = 0; j < n_carried; ++j)
    if (!node.output(j).empty())
      nodes.push_back(simple_node("Identity", owner + "/v_final_" + std::to_string(j),
                                  {carried[static_cast<size_t>(j)]}, node.output(j)));
  // Scan outputs: the iterations' values stacked on a new axis 0 (Unsqueeze's axes are an input
  // from opset 13, an attribute before).
  const bool axes_input = model_opset(model, "") >= 13;
  std::string axes;
  for (int s = 0; s < n_scan; ++s) {
    const std::string& o = node.output(n_carried + s);
    if (o.empty()) continue;
    if (axes_input && axes.empty()) {
      axes = fresh(owner + "_axis0");
      nodes.push_back(constant_node(owner + "/axis0", axes,
                                    Tensor::from_vector<int64_t>({1}, std::vector<int64_t>{0})));
    }
    onnx::NodeProto concat;
    concat.set_op_type("Concat");
    concat.set_name(owner + "/scan_output_" + std::to_string(s));
    auto* axis = concat.add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    for (size_t k = 0; k < scans[static_cast<size_t>(s)].size(); ++k) {
      const std::string& v = scans[static_cast<size_t>(s)][k];
      onnx::NodeProto u = simple_node(
          "Unsqueeze",
          owner + "/scan_output_" + std::to_string(s) + " [iter " + std::to_string(k) + "]",
          axes_input ? std::vector<std::string>{v, axes} : std::vector<std::string>{v},
          fresh(o + "__iter" + std::to_string(k)));
      if (!axes_input) {
        auto* a = u.add_attribute();
        a->set_name("axes");
        a->set_type(onnx::AttributeProto::INTS);
        a->add_ints(0);
      }
      concat.add_input(u.output(0));
      nodes.push_back(std::move(u));
    }
    concat.add_output(o);
    nodes.push_back(std::move(concat));
  }
  replace_node(*g, node_index, std::move(nodes));
  return out;
}

Expected<TakenBranches> inline_taken_branches(const onnx::ModelProto& model,
                                              const std::filesystem::path& base_dir,
                                              const std::map<std::string, Tensor>& inputs,
                                              const reference::InterpreterOptions& options) {
  TakenBranches out;
  out.model = model;
  // Loops left in place, by their first output's name (unique in the graph, unlike an index).
  std::set<std::string> kept_loops;
  auto key = [](const onnx::NodeProto& n) { return n.output_size() ? n.output(0) : n.name(); };
  for (int depth = 0;; ++depth) {
    const onnx::GraphProto& g = out.model.graph();
    std::vector<int> todo;
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      if (is_op(n, "If") || (is_op(n, "Loop") && !kept_loops.count(key(n)))) todo.push_back(i);
    }
    if (todo.empty()) break;
    if (depth == kMaxInlinedIfDepth) {
      for (int i : todo)
        out.kept.push_back(node_label(g.node(i), i) + " is nested deeper than " +
                           std::to_string(kMaxInlinedIfDepth) + " levels");
      break;
    }
    ODB_ASSIGN_OR_RETURN(ControlFlowRun run,
                         observe_control_flow(out.model, base_dir, inputs, options));
    std::vector<TakenBranch> level;
    std::vector<int> replace;
    for (int i : todo) {
      const onnx::NodeProto& n = g.node(i);
      TakenBranch t;
      t.node = owner_name(n, i);
      t.op_type = n.op_type();
      t.depth = depth;
      if (t.op_type == "If") {
        t.then_branch = run.conditions.at(i);
      } else {
        t.iterations = run.iterations.at(i);
        const onnx::GraphProto* body = body_of(n, "body");
        const int64_t body_nodes = body ? body->node_size() : 0;
        std::string why;
        if (t.iterations == 0) {
          why = "ran no iteration";
        } else if (t.iterations * body_nodes > kMaxUnrolledNodes) {
          why = "ran " + std::to_string(t.iterations) + " iterations of " +
                std::to_string(body_nodes) + " nodes (more than " +
                std::to_string(kMaxUnrolledNodes) + " nodes unrolled)";
        }
        if (!why.empty()) {
          kept_loops.insert(key(n));
          out.kept.push_back("Loop '" + t.node + "' " + why);
          continue;
        }
      }
      level.push_back(t);
      replace.push_back(i);
    }
    // The last node first: replacing node i moves only the nodes after it.
    for (size_t k = replace.size(); k-- > 0;) {
      const int i = replace[k];
      auto next = level[k].op_type == "If" ? inline_if_branch(out.model, i, level[k].then_branch)
                                           : unroll_loop(out.model, i, level[k].iterations);
      if (!next) return next.status();
      out.model = std::move(*next);
    }
    out.taken.insert(out.taken.end(), level.begin(), level.end());
  }
  const onnx::GraphProto& g = out.model.graph();
  for (int i = 0; i < g.node_size(); ++i)
    if (is_op(g.node(i), "Scan"))
      out.kept.push_back("Scan '" + owner_name(g.node(i), i) + "' is not unrolled");
  return out;
}

}  // namespace onnxdbg::surgeon
