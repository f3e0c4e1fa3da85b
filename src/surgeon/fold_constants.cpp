// Constant folding to a fixed point: mark the nodes computable from constants (and Shape/Size of
// statically shaped tensors), run them once on the reference interpreter, turn the values the
// rest of the graph reads into initializers, do the same inside every subgraph with the enclosing
// graphs' constants as its outer scope, re-run shape inference, repeat.
#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "model/graph.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "reference/interpreter.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {

namespace {

bool nondeterministic(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (op.rfind("Random", 0) == 0 || op == "Bernoulli" || op == "Multinomial") return true;
  bool inside = false;
  for_each_subgraph(n, [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& sn : g.node()) inside = inside || nondeterministic(sn);
  });
  return inside;
}

// Static shape of `name` when every dim is known: graph inputs, initializers, inferred types.
std::optional<Shape> static_shape(const std::string& name, const onnx::GraphProto& g,
                                  const std::unordered_map<std::string, onnx::TypeProto>& types) {
  const onnx::TypeProto* type = nullptr;
  for (const auto& vi : g.input())
    if (vi.name() == name) type = &vi.type();
  if (!type) {
    for (const auto& t : g.initializer())
      if (t.name() == name) return Shape(t.dims().begin(), t.dims().end());
    auto it = types.find(name);
    if (it != types.end()) type = &it->second;
  }
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return std::nullopt;
  Shape s;
  for (const auto& d : type->tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    s.push_back(d.dim_value());
  }
  return s;
}

// Value of Shape (with opset-15 start/end) or Size applied to a tensor of shape `s`.
Tensor shape_value(const onnx::NodeProto& n, const Shape& s) {
  if (n.op_type() == "Size") {
    int64_t numel = 1;
    for (auto d : s) numel *= d;
    return Tensor::scalar<int64_t>(numel);
  }
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t start = 0, end = rank;
  for (const auto& a : n.attribute()) {
    if (a.name() == "start") start = a.i();
    if (a.name() == "end") end = a.i();
  }
  auto clamp = [&](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  start = clamp(start);
  end = clamp(end);
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(s[static_cast<size_t>(i)]);
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims);
}

struct Marking {
  std::vector<bool> foldable;          // by node index
  std::map<int, Tensor> shape_values;  // Shape/Size nodes folded from static shapes
};

using ConstMap = std::unordered_map<std::string, const onnx::TensorProto*>;
using TypeMap = std::unordered_map<std::string, onnx::TypeProto>;
// The static shape of a name as seen from inside a graph (its own values, then the enclosing
// graphs' ones).
using ShapeLookup = std::function<std::optional<Shape>(const std::string&)>;

// What one folding round shares across the graphs it visits.
struct Round {
  const onnx::ModelProto& model;  // IR version, opsets and functions for the evaluation models
  const std::filesystem::path& base_dir;
  const FoldOptions& options;
  const InferredTypes& inferred;
  std::set<std::pair<std::string, std::string>> missing;  // ops without a reference kernel
  FoldStats& stats;
};

// The constants `g` can read: `outer` (enclosing graphs' constants) less the names `g` defines
// itself, plus g's own initializers. From IR 4 on, a main-graph initializer that is also a graph
// input is a default the caller may override; before, every initializer had to be listed as an
// input and is a constant.
ConstMap graph_constants(const onnx::GraphProto& g, const ConstMap& outer, bool is_main,
                         int64_t ir_version) {
  ConstMap c = outer;
  std::unordered_set<std::string> graph_inputs;
  for (const auto& vi : g.input()) {
    graph_inputs.insert(vi.name());
    c.erase(vi.name());
  }
  for (const auto& n : g.node())
    for (const auto& o : n.output()) c.erase(o);
  for (const auto& t : g.initializer())
    if ((is_main && ir_version < 4) || !graph_inputs.count(t.name())) c[t.name()] = &t;
  return c;
}

// A name not defined in `g` nor among `taken`, built from `base`.
std::string fresh_name(const onnx::GraphProto& g, const ConstMap& taken, const std::string& base) {
  std::unordered_set<std::string> used;
  for (const auto& vi : g.input()) used.insert(vi.name());
  for (const auto& t : g.initializer()) used.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) used.insert(o);
  std::string name = base;
  for (int k = 2; used.count(name) || taken.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

// One folding round over `g` and then over the subgraphs of the nodes it keeps. `outer` holds
// the constants of the enclosing graphs; `types` the statically known types of g's values, or
// null where Shape/Size must not fold (Loop and Scan bodies, whose carried values may change shape
// from one iteration to the next); `outer_shapes` the enclosing graphs' static shapes (null in
// the main graph). `where` names g in notes. run() returns the number of nodes folded.
class GraphFolder {
 public:
  GraphFolder(Round& r, onnx::GraphProto& g, const ConstMap& outer, const TypeMap* types,
              const ShapeLookup* outer_shapes, bool is_main, std::string where)
      : r_(r),
        g_(g),
        outer_(outer),
        types_(types),
        outer_shapes_(outer_shapes),
        is_main_(is_main),
        where_(std::move(where)),
        n_(g.node_size()),
        inits_(graph_constants(g, outer, is_main, r.model.ir_version())),
        excluded_(static_cast<size_t>(n_), false) {
    for (const auto& vi : g.input()) defined_here_.insert(vi.name());
    for (const auto& t : g.initializer()) defined_here_.insert(t.name());
    for (const auto& node : g.node())
      for (const auto& o : node.output()) defined_here_.insert(o);
    // A subgraph's output keeps a producer: an Identity reading the folded value, because
    // runtimes do not all accept a subgraph output that is an initializer.
    if (!is_main)
      for (const auto& o : g.output()) subgraph_outputs_.insert(o.name());
  }

  Expected<int64_t> run() {
    ODB_RETURN_IF_ERROR(evaluate());
    find_boundary();
    int64_t folded = 0;
    for (bool f : marking_.foldable) folded += f;
    if (folded > 0) ODB_RETURN_IF_ERROR(replace_folded(folded));
    ODB_ASSIGN_OR_RETURN(int64_t in_bodies, fold_bodies());
    return folded + in_bodies;
  }

 private:
  std::optional<Shape> shape_of(const std::string& name) const {
    if (defined_here_.count(name)) return types_ ? static_shape(name, g_, *types_) : std::nullopt;
    return outer_shapes_ ? (*outer_shapes_)(name) : std::nullopt;
  }
  Marking mark() const;
  onnx::ModelProto evaluation_model(std::vector<int>& run_nodes) const;
  Status evaluate();
  void find_boundary();
  Status replace_folded(int64_t folded);
  Expected<int64_t> fold_bodies();

  Round& r_;
  onnx::GraphProto& g_;
  const ConstMap& outer_;
  const TypeMap* types_;
  const ShapeLookup* outer_shapes_;
  const bool is_main_;
  const std::string where_;
  const int n_;
  const ConstMap inits_;
  std::unordered_set<std::string> defined_here_;
  std::unordered_set<std::string> subgraph_outputs_;
  std::vector<bool> excluded_;            // nodes that failed to evaluate or are too large
  std::map<std::string, Tensor> values_;  // outputs of evaluated nodes, kept across retries
  Marking marking_;
  std::unordered_set<std::string> boundary_;  // folded values the rest of the graph reads
};

// The nodes computable from constants, given the ones excluded so far.
Marking GraphFolder::mark() const {
  Marking m;
  m.foldable.assign(static_cast<size_t>(n_), false);
  std::unordered_set<std::string> constant;
  for (const auto& [name, t] : inits_) constant.insert(name);
  for (int i = 0; i < n_; ++i) {
    const auto& node = g_.node(i);
    if (excluded_[static_cast<size_t>(i)] || nondeterministic(node)) continue;
    // The Identity that gives a subgraph output its folded value stays (see replace_folded).
    if (!is_main_ && node.op_type() == "Identity" && node.output_size() == 1 &&
        subgraph_outputs_.count(node.output(0)))
      continue;
    const std::string domain = canonical_domain(node.domain());
    if (r_.missing.count({domain, node.op_type()})) continue;
    bool ok = true;
    for (const auto& rd : node_reads(node)) ok = ok && constant.count(rd);
    if (!ok && types_ && (node.op_type() == "Shape" || node.op_type() == "Size") &&
        domain.empty() && node.input_size() == 1 && node.output_size() == 1) {
      if (auto s = shape_of(node.input(0))) {
        m.shape_values.emplace(i, shape_value(node, *s));
        ok = true;
      }
    }
    if (!ok) continue;
    m.foldable[static_cast<size_t>(i)] = true;
    for (const auto& o : node.output())
      if (!o.empty()) constant.insert(o);
  }
  return m;
}

// A model of the marked nodes whose values are not known yet (`run_nodes`, by index in g), with
// what they read as initializers and what they compute as outputs.
onnx::ModelProto GraphFolder::evaluation_model(std::vector<int>& run_nodes) const {
  onnx::ModelProto mini;
  mini.set_ir_version(r_.model.ir_version());
  *mini.mutable_opset_import() = r_.model.opset_import();
  *mini.mutable_functions() = r_.model.functions();
  auto* mg = mini.mutable_graph();
  mg->set_name("fold");
  std::unordered_set<std::string> added;
  for (int i = 0; i < n_; ++i) {
    if (!marking_.foldable[static_cast<size_t>(i)] || marking_.shape_values.count(i)) continue;
    const auto& node = g_.node(i);
    bool known = true;
    for (const auto& o : node.output()) known = known && (o.empty() || values_.count(o));
    if (known) continue;
    for (const auto& rd : node_reads(node)) {
      if (!added.insert(rd).second) continue;
      if (auto it = values_.find(rd); it != values_.end()) {
        *mg->add_initializer() = tensor_to_proto(it->second, rd);
      } else if (auto jt = inits_.find(rd); jt != inits_.end()) {
        *mg->add_initializer() = *jt->second;
      }
    }
    *mg->add_node() = node;
    run_nodes.push_back(i);
    for (const auto& o : node.output())
      if (!o.empty()) {
        added.insert(o);
        mg->add_output()->set_name(o);
      }
  }
  return mini;
}

// Marks and evaluates the foldable nodes in one interpreter run; a node that fails is excluded
// (with a note) and the rest is tried again.
Status GraphFolder::evaluate() {
  for (;;) {
    marking_ = mark();
    for (const auto& [i, v] : marking_.shape_values) values_[g_.node(i).output(0)] = v;
    std::vector<int> run_nodes;
    const onnx::ModelProto mini = evaluation_model(run_nodes);
    if (run_nodes.empty()) return Status::ok();
    std::set<size_t> ran;
    auto interp = reference::Interpreter::create(mini, r_.base_dir);
    Status failure;
    if (!interp) {
      failure = interp.status();
    } else {
      auto out = (*interp)->run({}, [&](const onnx::NodeProto&, size_t idx, const std::string&,
                                        const Tensor&) { ran.insert(idx); });
      if (out) {
        for (auto& [name, t] : *out) values_[name] = std::move(t);
        return Status::ok();
      }
      failure = out.status();
    }
    // Exclude the first node that did not run (the failing one) and try again without it.
    size_t bad = 0;
    while (ran.count(bad)) ++bad;
    if (bad >= run_nodes.size() || !interp) {
      if (!interp && is_main_)
        return std::move(failure).with_context("while preparing constant folding");
      bad = run_nodes.size() - 1;
    }
    const int bad_node = run_nodes[bad];
    excluded_[static_cast<size_t>(bad_node)] = true;
    r_.stats.notes.push_back("node " + node_label(g_.node(bad_node), bad_node) +
                             (is_main_ ? "" : " in " + where_) +
                             " was not folded: " + failure.message());
  }
}

// The folded values the rest of the graph reads; those over the size limit keep their producer
// (and so whatever feeds it).
void GraphFolder::find_boundary() {
  for (;;) {
    const auto prod = producers(g_);
    boundary_.clear();
    auto consider = [&](const std::string& name) {
      auto it = prod.find(name);
      if (it != prod.end() && marking_.foldable[static_cast<size_t>(it->second)])
        boundary_.insert(name);
    };
    for (int i = 0; i < n_; ++i)
      if (!marking_.foldable[static_cast<size_t>(i)])
        for (const auto& rd : node_reads(g_.node(i))) consider(rd);
    for (const auto& o : g_.output()) consider(o.name());
    bool changed = false;
    if (r_.options.size_limit > 0)
      for (const auto& name : boundary_) {
        auto v = values_.find(name);
        if (v != values_.end() &&
            static_cast<int64_t>(v->second.nbytes()) > r_.options.size_limit) {
          excluded_[static_cast<size_t>(prod.at(name))] = true;
          ++r_.stats.skipped_large;
          changed = true;
        }
      }
    if (!changed) return;
    marking_ = mark();  // values of the remaining marked nodes are all known already
  }
}

// Removes the folded nodes and adds the boundary values as initializers (a subgraph output gets
// an Identity reading its initializer; IR 3 lists the new initializers among the inputs).
Status GraphFolder::replace_folded(int64_t folded) {
  // New initializers in their producers' order, so the file is deterministic.
  std::vector<std::string> names;
  for (int i = 0; i < n_; ++i)
    for (const auto& o : g_.node(i).output())
      if (marking_.foldable[static_cast<size_t>(i)] && boundary_.count(o)) names.push_back(o);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < n_; ++i)
    if (!marking_.foldable[static_cast<size_t>(i)]) *kept.Add() = std::move(*g_.mutable_node(i));
  g_.mutable_node()->Swap(&kept);
  for (const auto& name : names) {
    auto v = values_.find(name);
    if (v == values_.end())
      return internal_error("constant folding lost the value of '" + name + "'");
    std::string init_name = name;
    if (subgraph_outputs_.count(name)) {
      init_name = fresh_name(g_, inits_, name + "_folded");
      auto* id = g_.add_node();
      id->set_name(init_name + "_identity");
      id->set_op_type("Identity");
      id->add_input(init_name);
      id->add_output(name);
    }
    *g_.add_initializer() = tensor_to_proto(v->second, init_name);
    if (is_main_ && r_.model.ir_version() < 4) {  // IR 3 requires every initializer among inputs
      auto* vi = g_.add_input();
      vi->set_name(name);
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(static_cast<int32_t>(v->second.dtype()));
      auto* shape = tt->mutable_shape();
      for (auto d : v->second.shape()) shape->add_dim()->set_dim_value(d);
    }
  }
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> vis;
  for (auto& vi : *g_.mutable_value_info())
    if (!boundary_.count(vi.name()) || subgraph_outputs_.count(vi.name()))
      *vis.Add() = std::move(vi);
  g_.mutable_value_info()->Swap(&vis);
  r_.stats.nodes_folded += folded;
  if (!is_main_) r_.stats.subgraph_nodes_folded += folded;
  r_.stats.initializers_added += static_cast<int64_t>(boundary_.size());
  return Status::ok();
}

// The bodies of the nodes that stay, with this graph's constants as their outer scope. IR 3 lists
// every initializer among a graph's inputs, which a body's signature cannot take.
Expected<int64_t> GraphFolder::fold_bodies() {
  if (r_.model.ir_version() < 4) return 0;
  const ConstMap here = graph_constants(g_, outer_, is_main_, r_.model.ir_version());
  const ShapeLookup shapes = [this](const std::string& name) { return shape_of(name); };
  int64_t folded = 0;
  for (int i = 0; i < g_.node_size(); ++i) {
    onnx::NodeProto& node = *g_.mutable_node(i);
    if (!has_subgraph(node)) continue;
    // Values in If branches have the shapes inference gives them; Loop and Scan bodies' may not.
    const TypeMap* sub_types =
        types_ && node.op_type() == "If" ? &r_.inferred.subgraph_types : nullptr;
    const std::string desc = node_label(node, i);
    Status st = Status::ok();
    for_each_subgraph_mut(node, [&](onnx::GraphProto& sg, const std::string& attribute) {
      if (!st) return;
      const std::string attr = attribute.substr(0, attribute.find('['));
      auto k =
          GraphFolder(r_, sg, here, sub_types, sub_types ? &shapes : nullptr, false,
                      "the " + attr + " of " + desc + (is_main_ ? std::string() : " in " + where_))
              .run();
      if (!k) {
        st = std::move(k).status();
        return;
      }
      folded += *k;
    });
    ODB_RETURN_IF_ERROR(st);
  }
  return folded;
}

}  // namespace

Expected<FoldStats> fold_constants(onnx::ModelProto& model, const std::filesystem::path& base_dir,
                                   const FoldOptions& options) {
  FoldStats stats;
  for (;;) {
    ++stats.passes;
    const InferredTypes inferred = infer_shapes(model);
    Round r{model, base_dir, options, inferred, {}, stats};
    for (const auto& mk : reference::find_missing_kernels(model))
      r.missing.insert({mk.domain, mk.op_type});
    ODB_ASSIGN_OR_RETURN(int64_t folded, GraphFolder(r, *model.mutable_graph(), {}, &inferred.types,
                                                     nullptr, /*is_main=*/true, "main")
                                             .run());
    if (folded == 0) break;
  }
  return stats;
}

}  // namespace onnxdbg::surgeon
