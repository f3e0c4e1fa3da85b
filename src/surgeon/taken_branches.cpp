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

// observe_control_flow's steps: the control-flow nodes and what each needs (an If's condition, a
// Loop's iteration probe, a Scan's scan-input shapes); what the inputs and initializers give
// already; one reference run up to the last of them for the rest; the result.
class ControlFlowObserver {
 public:
  ControlFlowObserver(const onnx::ModelProto& model, const std::filesystem::path& base_dir,
                      const std::map<std::string, Tensor>& inputs,
                      const reference::InterpreterOptions& options)
      : model_(model), g_(model.graph()), base_dir_(base_dir), inputs_(inputs), options_(options) {}

  Expected<ControlFlowRun> observe() {
    ODB_RETURN_IF_ERROR(find_nodes());
    ODB_RETURN_IF_ERROR(take_known());
    ODB_RETURN_IF_ERROR(run_reference());
    ControlFlowRun out;
    ODB_RETURN_IF_ERROR(read_conditions(out));
    ODB_RETURN_IF_ERROR(read_iterations(out));
    return out;
  }

 private:
  Status find_nodes();
  Status take_known();
  Status run_reference();
  Status read_conditions(ControlFlowRun& out);
  Status read_iterations(ControlFlowRun& out);

  const onnx::ModelProto& model_;
  const onnx::GraphProto& g_;
  const std::filesystem::path& base_dir_;
  const std::map<std::string, Tensor>& inputs_;
  const reference::InterpreterOptions& options_;
  std::vector<int> ifs_, loops_, scans_;
  std::map<int, std::vector<std::string>> scanned_;      // Scan -> its scan inputs
  std::map<std::string, std::optional<Tensor>> wanted_;  // value name -> its value once known
  std::map<std::string, std::optional<Shape>> shapes_;   // scan input -> its shape once known
};

Status ControlFlowObserver::find_nodes() {
  for (int i = 0; i < g_.node_size(); ++i) {
    if (is_op(g_.node(i), "If")) ifs_.push_back(i);
    if (is_op(g_.node(i), "Loop")) loops_.push_back(i);
    if (is_op(g_.node(i), "Scan") && model_opset(model_, "") >= 9) scans_.push_back(i);
  }
  // Each Scan's scan inputs (Scan-9: the last num_scan_inputs inputs), whose shapes are wanted.
  for (int i : scans_) {
    const onnx::NodeProto& n = g_.node(i);
    int64_t m = 0;
    for (const auto& a : n.attribute())
      if (a.name() == "num_scan_inputs") m = a.i();
    if (m < 1 || m > n.input_size())
      return model_error(node_label(n, i) + ": num_scan_inputs " + std::to_string(m) +
                         " does not fit its " + std::to_string(n.input_size()) + " inputs");
    for (int j = n.input_size() - static_cast<int>(m); j < n.input_size(); ++j) {
      scanned_[i].push_back(n.input(j));
      shapes_[n.input(j)];
    }
  }
  for (int i : ifs_) {
    const onnx::NodeProto& n = g_.node(i);
    if (n.input_size() < 1 || n.input(0).empty())
      return model_error(node_label(n, i) + " has no condition input");
    wanted_[n.input(0)];
  }
  for (int i : loops_) wanted_[iteration_probe(i)];
  return Status::ok();
}

// What the graph inputs and initializers give without running anything.
Status ControlFlowObserver::take_known() {
  for (auto& [name, shape] : shapes_)
    if (auto it = inputs_.find(name); it != inputs_.end()) shape = it->second.shape();
  for (const auto& init : g_.initializer())
    if (auto it = shapes_.find(init.name()); it != shapes_.end() && !it->second)
      it->second = Shape(init.dims().begin(), init.dims().end());
  for (auto& [name, value] : wanted_)
    if (auto it = inputs_.find(name); it != inputs_.end()) value = it->second;
  for (const auto& init : g_.initializer()) {
    auto it = wanted_.find(init.name());
    if (it == wanted_.end() || it->second) continue;
    ODB_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(init, base_dir_));
    it->second = std::move(t);
  }
  return Status::ok();
}

// The rest from one reference run of the nodes before the last If or Scan (what they read is
// computed before them) and up to the last Loop (its probe is its output), in the reference's
// order, on the model with the Loops' iteration probes.
Status ControlFlowObserver::run_reference() {
  const bool all_known = std::all_of(wanted_.begin(), wanted_.end(),
                                     [](const auto& w) { return w.second.has_value(); }) &&
                         std::all_of(shapes_.begin(), shapes_.end(),
                                     [](const auto& w) { return w.second.has_value(); });
  if (all_known) return Status::ok();
  ODB_ASSIGN_OR_RETURN(std::vector<int> order, topological_order(g_));
  size_t end = 0;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const onnx::NodeProto& n = g_.node(order[pos]);
    if (is_op(n, "If") || is_op(n, "Scan")) end = std::max(end, pos);
    if (is_op(n, "Loop")) end = std::max(end, pos + 1);
  }
  const onnx::ModelProto probe = with_iteration_probes(model_, loops_);
  ODB_ASSIGN_OR_RETURN(auto interp, reference::Interpreter::create(probe, base_dir_, options_));
  return interp->run_prefix(
      inputs_,
      [&](const onnx::NodeProto&, size_t, const std::string& tensor, const Tensor& value) {
        auto it = wanted_.find(tensor);
        if (it != wanted_.end() && !it->second) it->second = value;
        auto sh = shapes_.find(tensor);
        if (sh != shapes_.end() && !sh->second) sh->second = value.shape();
      },
      end);
}

Status ControlFlowObserver::read_conditions(ControlFlowRun& out) {
  for (int i : ifs_) {
    const onnx::NodeProto& n = g_.node(i);
    const auto& value = wanted_[n.input(0)];
    if (!value)
      return model_error(node_label(n, i) + ": its condition '" + n.input(0) +
                         "' was not computed before it");
    ODB_ASSIGN_OR_RETURN(out.conditions[i], condition_of(n, i, *value));
  }
  return Status::ok();
}

// Each Loop's iterations (its probe's length) and each Scan's scan-input shapes and iterations
// (the length of scan input 0 along its scanned axis).
Status ControlFlowObserver::read_iterations(ControlFlowRun& out) {
  for (int i : loops_) {
    const auto& value = wanted_[iteration_probe(i)];
    if (!value || value->shape().empty())
      return model_error(node_label(g_.node(i), i) + ": its iterations were not counted");
    out.iterations[i] = value->shape()[0];
  }
  for (const auto& [i, names] : scanned_) {
    std::vector<Shape>& got = out.scan_input_shapes[i];
    for (const auto& name : names) {
      if (!shapes_[name])
        return model_error(node_label(g_.node(i), i) + ": the shape of its scan input '" + name +
                           "' was not computed before it");
      got.push_back(*shapes_[name]);
    }
    int64_t axis = 0;
    for (const auto& a : g_.node(i).attribute())
      if (a.name() == "scan_input_axes" && a.ints_size() > 0) axis = a.ints(0);
    const int64_t rank = static_cast<int64_t>(got[0].size());
    if (axis < 0) axis += rank;
    if (axis >= 0 && axis < rank) out.iterations[i] = got[0][static_cast<size_t>(axis)];
  }
  return Status::ok();
}

}  // namespace

Expected<ControlFlowRun> observe_control_flow(const onnx::ModelProto& model,
                                              const std::filesystem::path& base_dir,
                                              const std::map<std::string, Tensor>& inputs,
                                              const reference::InterpreterOptions& options) {
  return ControlFlowObserver(model, base_dir, inputs, options).observe();
}

namespace {

/// What unroll_loop and unroll_scan share: a copy of the model whose node `index` is being
/// replaced by copies of `body`, one per iteration, and the nodes that will take its place.
class Unroller {
 public:
  Unroller(const onnx::ModelProto& model, int index, const onnx::GraphProto& body)
      : out_(model),
        node_(model.graph().node(index)),
        index_(index),
        body_(body),
        taken_(names_in_use(model.graph(), index)),
        owner_(owner_name(node_, index)),
        axes_input_(model_opset(model, "") >= 13) {
    for (const auto& init : body.initializer()) {  // lifted once, shared by the iterations
      auto* t = out_.mutable_graph()->add_initializer();
      *t = init;
      t->set_name(fresh(init.name()));
      lifted_[init.name()] = t->name();
    }
  }

  /// `base`, or `base_<k>` for the first k that no value of the model uses yet; now used.
  std::string fresh(const std::string& base) {
    std::string f = base;
    for (int c = 0; taken_.count(f); ++c) f = base + "_" + std::to_string(c);
    taken_.insert(f);
    return f;
  }
  static std::string tag(int64_t k) { return " [iter " + std::to_string(k) + "]"; }
  const std::string& owner() const { return owner_; }

  void add_constant(const std::string& name, const std::string& output, const Tensor& value) {
    nodes_.push_back(constant_node(owner_ + "/" + name, output, value));
  }
  void add(onnx::NodeProto n) { nodes_.push_back(std::move(n)); }

  /// Iteration `k` of the body, its inputs bound by `inputs` (body input name -> value); returns
  /// the names its outputs have, in the body's output order.
  std::vector<std::string> iteration(int64_t k, const Renames& inputs) {
    Renames r = lifted_;
    for (const auto& [from, to] : inputs) r[from] = to;
    const std::string suffix = "__iter" + std::to_string(k);
    for (const auto& n : body_.node())
      for (const auto& o : n.output())
        if (!o.empty()) r[o] = fresh(o + suffix);
    for (int b = 0; b < body_.node_size(); ++b)
      nodes_.push_back(moved_node(body_.node(b), b, r, node_, index_, "body", tag(k)));
    std::vector<std::string> outs;
    for (const auto& o : body_.output()) outs.push_back(renamed(r, o.name()));
    return outs;
  }

  /// `values` (one per iteration) stacked into `output` on a new axis `axis` (negative: counted
  /// from the end of the stacked rank; ONNX Unsqueeze-11+ and Concat-11+), in reverse order when
  /// `reverse` (a Scan output with direction 1).
  void stack(const std::vector<std::string>& values, const std::string& output, int64_t axis,
             bool reverse, const std::string& what) {
    if (axes_input_ && axes_.count(axis) == 0) {
      axes_[axis] = fresh(owner_ + "_axis" + std::to_string(axis));
      add_constant("axis" + std::to_string(axis), axes_[axis],
                   Tensor::from_vector<int64_t>({1}, std::vector<int64_t>{axis}));
    }
    onnx::NodeProto concat = simple_node("Concat", owner_ + "/" + what, {}, output);
    concat.clear_input();
    auto* a = concat.add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(axis);
    std::vector<std::string> parts;
    for (size_t k = 0; k < values.size(); ++k) {
      onnx::NodeProto u =
          simple_node("Unsqueeze", owner_ + "/" + what + tag(static_cast<int64_t>(k)),
                      axes_input_ ? std::vector<std::string>{values[k], axes_[axis]}
                                  : std::vector<std::string>{values[k]},
                      fresh(output + "__iter" + std::to_string(k)));
      if (!axes_input_) {
        auto* ax = u.add_attribute();
        ax->set_name("axes");
        ax->set_type(onnx::AttributeProto::INTS);
        ax->add_ints(axis);
      }
      parts.push_back(u.output(0));
      nodes_.push_back(std::move(u));
    }
    if (reverse) std::reverse(parts.begin(), parts.end());
    for (const auto& p : parts) concat.add_input(p);
    nodes_.push_back(std::move(concat));
  }

  /// The model with the node replaced.
  onnx::ModelProto finish() && {
    replace_node(*out_.mutable_graph(), index_, std::move(nodes_));
    return std::move(out_);
  }

 private:
  onnx::ModelProto out_;
  const onnx::NodeProto& node_;  // in the caller's model, which outlives this
  int index_;
  const onnx::GraphProto& body_;
  NameSet taken_;
  std::string owner_;
  bool axes_input_;
  Renames lifted_;
  std::map<int64_t, std::string> axes_;
  std::vector<onnx::NodeProto> nodes_;
};

}  // namespace

Expected<onnx::ModelProto> unroll_loop(const onnx::ModelProto& model, int node_index,
                                       int64_t iterations) {
  ODB_ASSIGN_OR_RETURN(const onnx::NodeProto* found, main_node_of(model, node_index, "Loop"));
  const onnx::NodeProto& node = *found;
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

  Unroller u(model, node_index, *body);
  std::string cond = node.input_size() > 1 ? node.input(1) : "";
  std::vector<std::string> carried;
  carried.reserve(static_cast<size_t>(n_carried));
  for (int j = 0; j < n_carried; ++j) carried.push_back(node.input(2 + j));
  std::vector<std::vector<std::string>> scans(static_cast<size_t>(n_scan));
  for (int64_t k = 0; k < iterations; ++k) {
    Renames in;
    const std::string number = u.fresh(body->input(0).name() + "__iter" + std::to_string(k));
    u.add_constant("body/iteration_num" + Unroller::tag(k), number, Tensor::scalar<int64_t>(k));
    in[body->input(0).name()] = number;
    if (cond.empty()) {
      cond = u.fresh(body->input(1).name() + "__iter" + std::to_string(k));
      u.add_constant("body/cond" + Unroller::tag(k), cond, Tensor::scalar<bool>(true));
    }
    in[body->input(1).name()] = cond;
    for (int j = 0; j < n_carried; ++j)
      in[body->input(2 + j).name()] = carried[static_cast<size_t>(j)];
    const std::vector<std::string> outs = u.iteration(k, in);
    cond = outs[0];
    // outs: the condition, the carried values, the scan outputs.
    for (size_t j = 0; j < carried.size(); ++j) carried[j] = outs[1 + j];
    for (size_t s = 0; s < scans.size(); ++s) scans[s].push_back(outs[1 + carried.size() + s]);
  }
  for (int j = 0; j < n_carried; ++j)
    if (!node.output(j).empty())
      u.add(simple_node("Identity", u.owner() + "/v_final_" + std::to_string(j),
                        {carried[static_cast<size_t>(j)]}, node.output(j)));
  for (int s = 0; s < n_scan; ++s)
    if (!node.output(n_carried + s).empty())
      u.stack(scans[static_cast<size_t>(s)], node.output(n_carried + s), 0, false,
              "scan_output_" + std::to_string(s));
  return std::move(u).finish();
}

namespace {

// A Scan-9+ node's attributes, checked against its body and its scan inputs' shapes.
struct ScanSpec {
  int64_t m = -1;     // scan inputs (the last m inputs)
  int64_t n = 0;      // state variables (the first n inputs and outputs)
  int64_t k_out = 0;  // scan outputs (after the states)
  std::vector<int64_t> in_dirs, out_axes, out_dirs;
  std::vector<int64_t> axes;  // each scan input's scanned axis, normalized by its rank
  int64_t iterations = 0;     // the length of scan input 0 along its axis

  static int64_t at(const std::vector<int64_t>& v, int64_t i) {
    return i < static_cast<int64_t>(v.size()) ? v[static_cast<size_t>(i)] : 0;
  }
};

Expected<ScanSpec> scan_spec(const onnx::ModelProto& model, const onnx::NodeProto& node,
                             int node_index, const onnx::GraphProto& body,
                             const std::vector<Shape>& scan_input_shapes) {
  ScanSpec sp;
  std::vector<int64_t> in_axes;
  for (const auto& a : node.attribute()) {
    std::vector<int64_t> v(a.ints().begin(), a.ints().end());
    if (a.name() == "num_scan_inputs") sp.m = a.i();
    if (a.name() == "scan_input_axes") in_axes = v;
    if (a.name() == "scan_input_directions") sp.in_dirs = v;
    if (a.name() == "scan_output_axes") sp.out_axes = v;
    if (a.name() == "scan_output_directions") sp.out_dirs = v;
  }
  const std::string label = node_label(node, node_index);
  sp.n = node.input_size() - sp.m;
  sp.k_out = node.output_size() - sp.n;
  if (sp.m < 1 || sp.n < 0 || sp.k_out < 0 || body.input_size() != sp.n + sp.m ||
      body.output_size() != node.output_size() ||
      static_cast<int64_t>(scan_input_shapes.size()) != sp.m)
    return model_error(label + ": its body's " + std::to_string(body.input_size()) +
                       " inputs and " + std::to_string(body.output_size()) +
                       " outputs do not match the node's " + std::to_string(node.input_size()) +
                       " inputs (" + std::to_string(sp.m) + " scanned) and " +
                       std::to_string(node.output_size()) + " outputs");
  for (int64_t j = 0; j < sp.m; ++j) {
    const int64_t rank = static_cast<int64_t>(scan_input_shapes[static_cast<size_t>(j)].size());
    const int64_t given = ScanSpec::at(in_axes, j);
    const int64_t a = given < 0 ? given + rank : given;
    if (a < 0 || a >= rank)
      return model_error(label + ": scan_input_axes " + std::to_string(given) +
                         " is outside the rank " + std::to_string(rank) + " of scan input " +
                         std::to_string(j));
    sp.axes.push_back(a);
  }
  for (int64_t s = 0; s < sp.k_out; ++s)
    if (ScanSpec::at(sp.out_axes, s) < 0 && model_opset(model, "") < 11)
      return unsupported(label + ": a negative scan_output_axes before opset 11 is not unrolled");
  sp.iterations = scan_input_shapes[0][static_cast<size_t>(sp.axes[0])];
  for (int64_t j = 1; j < sp.m; ++j)
    if (scan_input_shapes[static_cast<size_t>(j)]
                         [static_cast<size_t>(sp.axes[static_cast<size_t>(j)])] != sp.iterations)
      return model_error(label + ": scan input " + std::to_string(j) +
                         " has another length than scan input 0 (" + std::to_string(sp.iterations) +
                         ")");
  if (sp.iterations < 1) return invalid_argument(label + " scans no slice; nothing to unroll");
  return sp;
}

// One copy of the body per slice: each scan input's slice by a Gather (reversed for direction
// 1), the states threaded, the final states by Identity and the scan outputs stacked.
void unroll_scan_iterations(Unroller& u, const onnx::NodeProto& node, const onnx::GraphProto& body,
                            const ScanSpec& sp) {
  std::vector<std::string> state;
  for (int64_t i = 0; i < sp.n; ++i) state.push_back(node.input(static_cast<int>(i)));
  std::vector<std::vector<std::string>> scans(static_cast<size_t>(sp.k_out));
  std::map<int64_t, std::string> index_of;  // slice index -> its Constant
  for (int64_t k = 0; k < sp.iterations; ++k) {
    Renames in;
    for (int64_t i = 0; i < sp.n; ++i)
      in[body.input(static_cast<int>(i)).name()] = state[static_cast<size_t>(i)];
    for (int64_t j = 0; j < sp.m; ++j) {
      const int64_t t = ScanSpec::at(sp.in_dirs, j) != 0 ? sp.iterations - 1 - k : k;
      if (!index_of.count(t)) {
        index_of[t] = u.fresh(u.owner() + "_slice" + std::to_string(t));
        u.add_constant("slice" + std::to_string(t), index_of[t], Tensor::scalar<int64_t>(t));
      }
      const std::string& scanned = body.input(static_cast<int>(sp.n + j)).name();
      onnx::NodeProto g =
          simple_node("Gather", u.owner() + "/scan_input_" + std::to_string(j) + Unroller::tag(k),
                      {node.input(static_cast<int>(sp.n + j)), index_of[t]},
                      u.fresh(scanned + "__iter" + std::to_string(k)));
      auto* a = g.add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(sp.axes[static_cast<size_t>(j)]);
      in[scanned] = g.output(0);
      u.add(std::move(g));
    }
    const std::vector<std::string> outs = u.iteration(k, in);
    for (int64_t i = 0; i < sp.n; ++i) state[static_cast<size_t>(i)] = outs[static_cast<size_t>(i)];
    for (int64_t s = 0; s < sp.k_out; ++s)
      scans[static_cast<size_t>(s)].push_back(outs[static_cast<size_t>(sp.n + s)]);
  }
  for (int64_t i = 0; i < sp.n; ++i)
    if (!node.output(static_cast<int>(i)).empty())
      u.add(simple_node("Identity", u.owner() + "/final_state_" + std::to_string(i),
                        {state[static_cast<size_t>(i)]}, node.output(static_cast<int>(i))));
  for (int64_t s = 0; s < sp.k_out; ++s)
    if (!node.output(static_cast<int>(sp.n + s)).empty())
      u.stack(scans[static_cast<size_t>(s)], node.output(static_cast<int>(sp.n + s)),
              ScanSpec::at(sp.out_axes, s), ScanSpec::at(sp.out_dirs, s) != 0,
              "scan_output_" + std::to_string(s));
}

}  // namespace

Expected<onnx::ModelProto> unroll_scan(const onnx::ModelProto& model, int node_index,
                                       const std::vector<Shape>& scan_input_shapes) {
  ODB_ASSIGN_OR_RETURN(const onnx::NodeProto* found, main_node_of(model, node_index, "Scan"));
  const onnx::NodeProto& node = *found;
  if (model_opset(model, "") < 9)
    return unsupported(node_label(node, node_index) +
                       ": Scan-8 (a batch axis and sequence_lens) is not unrolled");
  const onnx::GraphProto* body = body_of(node, "body");
  if (!body) return model_error(node_label(node, node_index) + " has no body");
  ODB_ASSIGN_OR_RETURN(ScanSpec sp, scan_spec(model, node, node_index, *body, scan_input_shapes));
  Unroller u(model, node_index, *body);
  unroll_scan_iterations(u, node, *body, sp);
  return std::move(u).finish();
}

int64_t unrolled_nodes(const onnx::NodeProto& node, int64_t iterations) {
  const onnx::GraphProto* body = body_of(node, "body");
  const int64_t per_iteration = (body ? body->node_size() : 0) + 1 + node.input_size();
  constexpr int64_t kEnough = int64_t{1} << 40;  // beyond any limit, without overflowing
  if (iterations <= 0) return 0;
  return iterations > kEnough / per_iteration ? kEnough : iterations * per_iteration;
}

namespace {
// Why a Loop or Scan that ran `iterations` times (-1: not counted) stays whole; "" if it does not.
std::string why_kept(const onnx::NodeProto& n, int64_t iterations) {
  if (iterations < 0) return "is not unrolled (Scan-8: a batch axis and sequence_lens)";
  if (iterations == 0) return "ran no iteration";
  if (unrolled_nodes(n, iterations) <= kMaxUnrolledNodes) return "";
  const onnx::GraphProto* body = body_of(n, "body");
  return "ran " + std::to_string(iterations) + " iterations of " +
         std::to_string(body ? body->node_size() : 0) + " nodes (more than " +
         std::to_string(kMaxUnrolledNodes) + " nodes unrolled)";
}
}  // namespace

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
      if (is_op(n, "If") || ((is_op(n, "Loop") || is_op(n, "Scan")) && !kept_loops.count(key(n))))
        todo.push_back(i);
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
        auto it = run.iterations.find(i);
        t.iterations = it == run.iterations.end() ? -1 : it->second;
        if (const std::string why = why_kept(n, t.iterations); !why.empty()) {
          kept_loops.insert(key(n));
          out.kept.push_back(t.op_type + " '" + t.node + "' " + why);
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
                  : level[k].op_type == "Loop"
                      ? unroll_loop(out.model, i, level[k].iterations)
                      : unroll_scan(out.model, i, run.scan_input_shapes[i]);
      if (!next && next.status().code() == ErrorCode::kUnsupported) {
        // Left whole (a negative scan_output_axes before opset 11), noted; the levels go on.
        kept_loops.insert(key(out.model.graph().node(i)));
        out.kept.push_back(next.status().message());
        level.erase(level.begin() + static_cast<std::ptrdiff_t>(k));
        continue;
      }
      if (!next) return next.status();
      out.model = std::move(*next);
    }
    out.taken.insert(out.taken.end(), level.begin(), level.end());
  }
  return out;
}

}  // namespace onnxdbg::surgeon
