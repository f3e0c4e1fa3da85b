// Constant folding to a fixed point: mark the nodes computable from constants (and Shape/Size of
// statically shaped tensors), run them once on the reference interpreter, turn the values the
// rest of the graph reads into initializers, do the same inside every subgraph with the enclosing
// graphs' constants as its outer scope, re-run shape inference, repeat.
#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "model/graph.h"
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
// the main graph). `where` names g in notes. Returns the number of nodes folded.
Expected<int64_t> fold_graph(Round& r, onnx::GraphProto& g, const ConstMap& outer,
                             const TypeMap* types, const ShapeLookup* outer_shapes, bool is_main,
                             const std::string& where) {
  const int n = g.node_size();
  const ConstMap inits = graph_constants(g, outer, is_main, r.model.ir_version());
  std::unordered_set<std::string> defined_here;
  for (const auto& vi : g.input()) defined_here.insert(vi.name());
  for (const auto& t : g.initializer()) defined_here.insert(t.name());
  for (const auto& node : g.node())
    for (const auto& o : node.output()) defined_here.insert(o);
  const ShapeLookup shapes = [&](const std::string& name) -> std::optional<Shape> {
    if (defined_here.count(name)) return types ? static_shape(name, g, *types) : std::nullopt;
    return outer_shapes ? (*outer_shapes)(name) : std::nullopt;
  };
  // A subgraph's output keeps a producer: an Identity reading the folded value, because
  // runtimes do not all accept a subgraph output that is an initializer.
  std::unordered_set<std::string> subgraph_outputs;
  if (!is_main)
    for (const auto& o : g.output()) subgraph_outputs.insert(o.name());

  std::vector<bool> excluded(static_cast<size_t>(n), false);
  std::map<std::string, Tensor> values;  // outputs of evaluated nodes, kept across retries
  auto mark = [&] {
    Marking m;
    m.foldable.assign(static_cast<size_t>(n), false);
    std::unordered_set<std::string> constant;
    for (const auto& [name, t] : inits) constant.insert(name);
    for (int i = 0; i < n; ++i) {
      const auto& node = g.node(i);
      if (excluded[static_cast<size_t>(i)] || nondeterministic(node)) continue;
      // The Identity that gives a subgraph output its folded value stays (see below).
      if (!is_main && node.op_type() == "Identity" && node.output_size() == 1 &&
          subgraph_outputs.count(node.output(0)))
        continue;
      const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
      if (r.missing.count({domain, node.op_type()})) continue;
      bool ok = true;
      for (const auto& rd : node_reads(node)) ok = ok && constant.count(rd);
      if (!ok && types && (node.op_type() == "Shape" || node.op_type() == "Size") &&
          domain.empty() && node.input_size() == 1 && node.output_size() == 1) {
        if (auto s = shapes(node.input(0))) {
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
  };

  Marking m;
  std::unordered_set<std::string> boundary;
  for (int attempt = 0;; ++attempt) {
    m = mark();
    for (const auto& [i, v] : m.shape_values) values[g.node(i).output(0)] = v;
    // Evaluate the marked nodes whose values are not known yet, in one interpreter run.
    onnx::ModelProto mini;
    mini.set_ir_version(r.model.ir_version());
    *mini.mutable_opset_import() = r.model.opset_import();
    *mini.mutable_functions() = r.model.functions();
    auto* mg = mini.mutable_graph();
    mg->set_name("fold");
    std::unordered_set<std::string> added;
    std::vector<int> run_nodes;
    for (int i = 0; i < n; ++i) {
      if (!m.foldable[static_cast<size_t>(i)] || m.shape_values.count(i)) continue;
      const auto& node = g.node(i);
      bool known = true;
      for (const auto& o : node.output()) known = known && (o.empty() || values.count(o));
      if (known) continue;
      for (const auto& rd : node_reads(node)) {
        if (!added.insert(rd).second) continue;
        if (auto it = values.find(rd); it != values.end()) {
          *mg->add_initializer() = tensor_to_proto(it->second, rd);
        } else if (auto jt = inits.find(rd); jt != inits.end()) {
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
    if (run_nodes.empty()) break;
    std::set<size_t> ran;
    auto interp = reference::Interpreter::create(mini, r.base_dir);
    Status failure;
    if (!interp) {
      failure = interp.status();
    } else {
      auto out = (*interp)->run({}, [&](const onnx::NodeProto&, size_t idx, const std::string&,
                                        const Tensor&) { ran.insert(idx); });
      if (out) {
        for (auto& [name, t] : *out) values[name] = std::move(t);
        break;
      }
      failure = out.status();
    }
    // Exclude the first node that did not run (the failing one) and try again without it.
    size_t bad = 0;
    while (ran.count(bad)) ++bad;
    if (bad >= run_nodes.size() || !interp) {
      if (!interp && is_main)
        return std::move(failure).with_context("while preparing constant folding");
      bad = run_nodes.size() - 1;
    }
    const int bad_node = run_nodes[bad];
    excluded[static_cast<size_t>(bad_node)] = true;
    r.stats.notes.push_back("node " + node_label(g.node(bad_node), bad_node) +
                            (is_main ? "" : " in " + where) +
                            " was not folded: " + failure.message());
  }
  // Values the rest of the graph reads become initializers; those over the limit keep their
  // producer (and so whatever feeds it).
  for (;;) {
    const auto prod = producers(g);
    boundary.clear();
    auto consider = [&](const std::string& name) {
      auto it = prod.find(name);
      if (it != prod.end() && m.foldable[static_cast<size_t>(it->second)]) boundary.insert(name);
    };
    for (int i = 0; i < n; ++i)
      if (!m.foldable[static_cast<size_t>(i)])
        for (const auto& rd : node_reads(g.node(i))) consider(rd);
    for (const auto& o : g.output()) consider(o.name());
    bool changed = false;
    if (r.options.size_limit > 0)
      for (const auto& name : boundary) {
        auto v = values.find(name);
        if (v != values.end() && static_cast<int64_t>(v->second.nbytes()) > r.options.size_limit) {
          excluded[static_cast<size_t>(prod.at(name))] = true;
          ++r.stats.skipped_large;
          changed = true;
        }
      }
    if (!changed) break;
    m = mark();  // values of the remaining marked nodes are all known already
  }
  int64_t folded = 0;
  for (bool f : m.foldable) folded += f;

  if (folded > 0) {
    // New initializers in their producers' order, so the file is deterministic.
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i)
      for (const auto& o : g.node(i).output())
        if (m.foldable[static_cast<size_t>(i)] && boundary.count(o)) names.push_back(o);
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < n; ++i)
      if (!m.foldable[static_cast<size_t>(i)]) *kept.Add() = std::move(*g.mutable_node(i));
    g.mutable_node()->Swap(&kept);
    for (const auto& name : names) {
      auto v = values.find(name);
      if (v == values.end())
        return internal_error("constant folding lost the value of '" + name + "'");
      std::string init_name = name;
      if (subgraph_outputs.count(name)) {
        init_name = fresh_name(g, inits, name + "_folded");
        auto* id = g.add_node();
        id->set_name(init_name + "_identity");
        id->set_op_type("Identity");
        id->add_input(init_name);
        id->add_output(name);
      }
      *g.add_initializer() = tensor_to_proto(v->second, init_name);
      if (is_main && r.model.ir_version() < 4) {  // IR 3 requires every initializer among inputs
        auto* vi = g.add_input();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(static_cast<int32_t>(v->second.dtype()));
        auto* shape = tt->mutable_shape();
        for (auto d : v->second.shape()) shape->add_dim()->set_dim_value(d);
      }
    }
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> vis;
    for (auto& vi : *g.mutable_value_info())
      if (!boundary.count(vi.name()) || subgraph_outputs.count(vi.name()))
        *vis.Add() = std::move(vi);
    g.mutable_value_info()->Swap(&vis);
    r.stats.nodes_folded += folded;
    if (!is_main) r.stats.subgraph_nodes_folded += folded;
    r.stats.initializers_added += static_cast<int64_t>(boundary.size());
  }

  // Then the bodies of the nodes that stay, with this graph's constants as their outer scope.
  // IR 3 lists every initializer among a graph's inputs, which a body's signature cannot take.
  if (r.model.ir_version() < 4) return folded;
  const ConstMap here = graph_constants(g, outer, is_main, r.model.ir_version());
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& node = *g.mutable_node(i);
    if (!has_subgraph(node)) continue;
    // Values in If branches have the shapes inference gives them; Loop and Scan bodies' may not.
    const TypeMap* sub_types =
        types && node.op_type() == "If" ? &r.inferred.subgraph_types : nullptr;
    const std::string desc = node_label(node, i);
    for (auto& a : *node.mutable_attribute()) {
      std::vector<onnx::GraphProto*> subs;
      if (a.has_g()) subs.push_back(a.mutable_g());
      for (auto& sg : *a.mutable_graphs()) subs.push_back(&sg);
      for (auto* sg : subs) {
        ODB_ASSIGN_OR_RETURN(
            int64_t k, fold_graph(r, *sg, here, sub_types, sub_types ? &shapes : nullptr, false,
                                  "the " + a.name() + " of " + desc +
                                      (is_main ? std::string() : " in " + where)));
        folded += k;
      }
    }
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
    ODB_ASSIGN_OR_RETURN(int64_t folded,
                         fold_graph(r, *model.mutable_graph(), {}, &inferred.types, nullptr,
                                    /*is_main=*/true, "main"));
    if (folded == 0) break;
  }
  return stats;
}

}  // namespace onnxdbg::surgeon
