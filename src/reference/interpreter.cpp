// Graph execution for the reference interpreter: scopes for subgraphs, kernel lookup by opset,
// function bodies for ops without a kernel, float16 handling, and freeing each value after its
// last use.
#include "reference/interpreter.h"

#include <fmt/format.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>

#include "core/run_limits.h"
#include "model/graph.h"
#include "model/model.h"
#include "reference/kernel.h"
#include "reference/run_watch.h"

namespace onnxdbg::reference {

std::string MissingKernel::to_string() const {
  return op_type + (domain.empty() ? "" : " (domain " + domain + ")") + " at opset " +
         std::to_string(opset);
}

const char* accumulate_name(Accumulate a) { return enum_name(kAccumulateNames, a).data(); }

Expected<Accumulate> parse_accumulate(const std::string& name) {
  return enum_from_name(kAccumulateNames, name, "accumulate");
}

namespace {

// The limits a run installs for its thread (and the pool's, reference/parallel.cpp); creation
// needs the memory limit alone.
RunLimits run_limits(const InterpreterOptions& o, bool with_timeout) {
  RunLimits l;
  l.max_memory = o.max_memory;
  l.max_iterations = o.max_iterations;
  if (with_timeout) l.timeout_seconds = o.timeout_seconds;
  return l;
}

OpsetMap opset_map(const onnx::ModelProto& model) {
  OpsetMap m;
  for (const auto& o : model.opset_import()) m[canonical_domain(o.domain())] = o.version();
  return m;
}

int64_t opset_of(const OpsetMap& opsets, const std::string& domain) {
  auto it = opsets.find(domain);
  return it == opsets.end() ? 0 : it->second;
}

// Types the load-time check knows for names (declared inputs, outputs, value_info, initializers,
// Constant outputs), for building context-dependent function bodies before any run.
using TypeMap = std::map<std::string, onnx::TypeProto>;

void add_declared_types(const onnx::GraphProto& g, TypeMap& types) {
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
    for (const auto& vi : *list)
      if (vi.has_type()) types[vi.name()] = vi.type();
  for (const auto& init : g.initializer()) {
    auto& tt = *types[init.name()].mutable_tensor_type();
    tt.set_elem_type(init.data_type());
    for (int64_t d : init.dims()) tt.mutable_shape()->add_dim()->set_dim_value(d);
  }
}

void collect_missing(const onnx::GraphProto& g, const OpsetMap& opsets, TypeMap types,
                     std::set<std::pair<std::string, std::string>>& seen,
                     std::vector<MissingKernel>& out, int depth) {
  add_declared_types(g, types);
  for (const auto& n : g.node()) {
    const std::string domain = canonical_domain(n.domain());
    const int64_t opset = opset_of(opsets, domain);
    const OpSupport support = op_support(domain, n.op_type(), opset);
    if (support == OpSupport::kNone && seen.insert({domain, n.op_type()}).second)
      out.push_back({domain, n.op_type(), opset, unsupported_reason(domain, n.op_type(), opset)});
    if (support == OpSupport::kFunctionBody && depth < 16) {
      std::vector<onnx::TypeProto> in_types;
      for (const auto& i : n.input()) {
        auto it = types.find(i);
        in_types.push_back(it == types.end() ? onnx::TypeProto() : it->second);
      }
      auto fg = build_function_graph(n, opset, in_types, opsets);
      if (fg) {
        TypeMap inner;
        for (int j = 0; j < fg->graph.input_size(); ++j)
          inner[fg->graph.input(j).name()] =
              in_types[static_cast<size_t>(fg->fed_inputs[static_cast<size_t>(j)])];
        collect_missing(fg->graph, fg->opsets, std::move(inner), seen, out, depth + 1);
      }
    }
    if (n.op_type() == "Constant" && domain.empty() && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) {
          auto& tt = *types[n.output(0)].mutable_tensor_type();
          tt.set_elem_type(a.t().data_type());
          for (int64_t d : a.t().dims()) tt.mutable_shape()->add_dim()->set_dim_value(d);
        }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_missing(a.g(), opsets, types, seen, out, depth);
      for (const auto& sg : a.graphs()) collect_missing(sg, opsets, types, seen, out, depth);
    }
  }
}

// Names a node reads, including those its subgraphs read from the outer scope.
void collect_reads(const onnx::NodeProto& n, std::set<std::string>& out) {
  for (const auto& i : n.input())
    if (!i.empty()) out.insert(i);
  for (const auto& a : n.attribute()) {
    std::vector<const onnx::GraphProto*> gs;
    if (a.has_g()) gs.push_back(&a.g());
    for (const auto& g : a.graphs()) gs.push_back(&g);
    for (const auto* g : gs) {
      for (const auto& sn : g->node()) collect_reads(sn, out);
      for (const auto& o : g->output()) out.insert(o.name());
    }
  }
}

// The type of a run-time value, as a context-dependent function builder reads it.
onnx::TypeProto type_of(const Value& v) {
  onnx::TypeProto t;
  auto tensor_type = [](const Tensor& x, onnx::TypeProto_Tensor& tt) {
    tt.set_elem_type(static_cast<int32_t>(x.dtype()));
    auto* shape = tt.mutable_shape();
    for (int64_t d : x.shape()) shape->add_dim()->set_dim_value(d);
  };
  switch (v.kind()) {
    case Value::Kind::kTensor:
      tensor_type(v.tensor(), *t.mutable_tensor_type());
      break;
    case Value::Kind::kSequence: {
      const Sequence& s = v.sequence();
      auto* elem = t.mutable_sequence_type()->mutable_elem_type();
      if (s.holds_maps()) {
        auto* mt = elem->mutable_map_type();
        mt->set_key_type(static_cast<int32_t>(s.map_key_type));
        mt->mutable_value_type()->mutable_tensor_type()->set_elem_type(
            static_cast<int32_t>(s.elem_type));
      } else {
        elem->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(s.elem_type));
      }
      break;
    }
    case Value::Kind::kMap: {
      auto* mt = t.mutable_map_type();
      mt->set_key_type(static_cast<int32_t>(v.map().keys.dtype()));
      mt->mutable_value_type()->mutable_tensor_type()->set_elem_type(
          static_cast<int32_t>(v.map().values.dtype()));
      break;
    }
    case Value::Kind::kOptional: {
      auto* ot = t.mutable_optional_type();
      if (v.has_element()) *ot->mutable_elem_type() = type_of(v.element());
      break;
    }
  }
  return t;
}

// Tensors of a few megabytes are allocated and freed at every node. By default glibc serves them
// with mmap (above a threshold that only adapts after the first frees) and gives the top of the
// heap back to the kernel, so each run takes fresh zeroed pages and their page faults: on the
// PP-OCR detector that was half the run time. Keeping freed memory in the heap, as ONNX Runtime's
// arena does, makes later runs reuse it; the peak resident size does not grow. Process-wide, set
// once; other allocators ignore it.
void keep_freed_memory() {
#ifdef __GLIBC__
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest; bigger blocks still use mmap
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
#endif
}

// Which kind of value a declared type holds; nullopt when the declaration says nothing.
std::optional<Value::Kind> declared_kind(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return Value::Kind::kTensor;
    case onnx::TypeProto::kSequenceType:
      return Value::Kind::kSequence;
    case onnx::TypeProto::kOptionalType:
      return Value::Kind::kOptional;
    case onnx::TypeProto::kMapType:
      return Value::Kind::kMap;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::vector<MissingKernel> find_missing_kernels(const onnx::ModelProto& model) {
  std::vector<MissingKernel> out;
  std::set<std::pair<std::string, std::string>> seen;
  OpsetMap opsets = opset_map(model);
  if (!opsets.count("")) opsets[""] = 1;
  collect_missing(model.graph(), opsets, {}, seen, out, 0);
  return out;
}

// Per-graph facts computed once (plan_of): the run order, each node's kernel, and the slots the
// values its nodes produce are kept in while the graph runs.
struct Interpreter::GraphPlan {
  // The order the nodes run in: a topological order (model/graph.h's topological_order, the file
  // order wherever that is valid). ONNX requires nodes sorted, but published models are not
  // always (ONNX Runtime sorts them itself), so the interpreter does not rely on the file's order.
  std::vector<size_t> order;
  Status order_error;  // a cycle: no order exists
  // Every name a node of the graph produces -> its slot in Scope::slots (the first producer's
  // slot where several nodes produce one name).
  std::unordered_map<std::string, int> slot_of;
  int num_slots = 0;
  // The rest is indexed by node (file order).
  std::vector<const KernelDef*> kernels;  // nullptr: runs a function body
  // Per node and input: the input's slot when a node of this graph produces it, else -1 (a
  // graph input, an initializer, an outer-scope value: looked up by name). Per output: its slot
  // (-1 for an omitted one).
  std::vector<std::vector<int>> input_slots, output_slots;
  std::vector<std::vector<int>> free_after;  // slots no later node of the graph reads
  // Per node and input: this node is the input's last reader in the graph, reads it once and
  // has no subgraph that could see it, so a kernel may move from it (when the graph owns it).
  std::vector<std::vector<bool>> last_read;
  std::vector<int64_t> opsets;     // each node's opset for its domain
  std::vector<bool> has_subgraph;  // the node has a graph attribute (If, Loop, Scan, ...)
};

// Values visible while running one graph: its own (owned or borrowed), then the parent's.
struct Interpreter::Scope {
  const Scope* parent = nullptr;
  std::map<std::string, const Value*> borrowed;  // feeds (they win over initializers)
  // The graph's initializers, looked up where they are kept (initializers_of) rather than
  // copied into `borrowed` on every run of the graph.
  const std::map<std::string, Value>* initializers = nullptr;
  // Produced by nodes of this graph, by the plan's slots (undefined: not produced yet, or freed).
  const GraphPlan* plan = nullptr;
  std::vector<Value> slots;

  /// The slot of `name` when a node of this graph produces it, else -1.
  int slot_index(const std::string& name) const {
    if (!plan) return -1;
    auto it = plan->slot_of.find(name);
    return it == plan->slot_of.end() ? -1 : it->second;
  }
  /// The value a node of this graph produced under `name`, or nullptr.
  const Value* owned(const std::string& name) const {
    const int slot = slot_index(name);
    if (slot < 0) return nullptr;
    const Value& v = slots[static_cast<size_t>(slot)];
    return v.defined() ? &v : nullptr;
  }
  /// The value visible under `name` here, or nullptr; *initializer (when given) tells whether
  /// it is an initializer, kept by the interpreter as long as it lives.
  const Value* find(const std::string& name, bool* initializer = nullptr) const {
    if (initializer) *initializer = false;
    for (const Scope* s = this; s; s = s->parent) {
      if (const Value* v = s->owned(name)) return v;
      if (auto it = s->borrowed.find(name); it != s->borrowed.end()) return it->second;
      if (s->initializers)
        if (auto it = s->initializers->find(name); it != s->initializers->end()) {
          if (initializer) *initializer = true;
          return &it->second;
        }
    }
    return nullptr;
  }
  /// The outputs of `graph` (this scope's graph, whose nodes have all run): those its nodes
  /// produced are moved out of their slots (no node reads them any more; a copy of a large output
  /// cost 14% of a MatMulInteger model's run); a name listed again later, an input, an
  /// initializer or an outer scope's value is copied. Errors: kModelError naming an output that
  /// nothing produces.
  Expected<std::vector<Value>> take_outputs(const onnx::GraphProto& graph,
                                            const std::string& graph_label) {
    std::vector<Value> result;
    result.reserve(static_cast<size_t>(graph.output_size()));
    for (int k = 0; k < graph.output_size(); ++k) {
      const std::string& name = graph.output(k).name();
      const Value* v = find(name);
      if (!v)
        return model_error("graph output '" + name + "' of graph '" + graph_label +
                           "' is produced by no node, initializer or input");
      bool listed_again = false;
      for (int j = k + 1; j < graph.output_size() && !listed_again; ++j)
        listed_again = graph.output(j).name() == name;
      const int slot = slot_index(name);
      Value* mine = slot < 0 ? nullptr : &slots[static_cast<size_t>(slot)];
      if (mine && mine->defined() && !listed_again)
        result.push_back(std::move(*mine));
      else
        result.push_back(*v);
    }
    return result;
  }
};

std::string format_profile(const std::vector<OpProfile>& profile, double total_seconds) {
  std::string out = fmt::format("{:<28} {:>7} {:>11} {:>11} {:>7}\n", "op type", "calls",
                                "total ms", "ms/call", "share");
  double sum = 0;
  for (const auto& p : profile) {
    sum += p.seconds;
    const std::string name = p.domain.empty() ? p.op_type : p.domain + "." + p.op_type;
    out +=
        fmt::format("{:<28} {:>7} {:>11.3f} {:>11.4f} {:>6.1f}%\n", name, p.calls, p.seconds * 1e3,
                    p.calls ? p.seconds * 1e3 / static_cast<double>(p.calls) : 0.0,
                    total_seconds > 0 ? 100 * p.seconds / total_seconds : 0.0);
  }
  out += fmt::format("{:<28} {:>7} {:>11.3f}\n", "(all kernels)", "", sum * 1e3);
  return out;
}

std::vector<OpProfile> Interpreter::profile() const {
  std::vector<OpProfile> out;
  for (const auto& [key, p] : profile_) out.push_back(p);
  std::stable_sort(out.begin(), out.end(),
                   [](const OpProfile& a, const OpProfile& b) { return a.seconds > b.seconds; });
  return out;
}

Interpreter::~Interpreter() = default;

const Interpreter::GraphPlan& Interpreter::plan_of(const onnx::GraphProto& graph,
                                                   const OpsetMap& opsets) {
  auto& cached = plans_[&graph];
  if (cached) return *cached;
  auto plan = std::make_unique<GraphPlan>();
  const size_t n = static_cast<size_t>(graph.node_size());
  // Names the graph reads but does not define come from enclosing scopes (or are undefined,
  // which the run reports at the node reading them): only a cycle leaves no order.
  const std::vector<std::string> free = free_names(graph);
  auto order = topological_order(graph, NameSet(free.begin(), free.end()));
  if (order) {
    for (int i : *order) plan->order.push_back(static_cast<size_t>(i));
  } else {
    plan->order_error = std::move(order).status();
    for (size_t i = 0; i < n; ++i) plan->order.push_back(i);
  }
  // Position in the run order of the last node that reads each name; graph outputs are kept to
  // the end.
  std::map<std::string, size_t> last_use;
  std::vector<std::set<std::string>> reads(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& node = graph.node(static_cast<int>(i));
    collect_reads(node, reads[i]);
    const std::string domain = canonical_domain(node.domain());
    plan->opsets.push_back(opset_of(opsets, domain));
    plan->kernels.push_back(
        KernelRegistry::global().find(domain, node.op_type(), plan->opsets.back()));
  }
  for (size_t pos = 0; pos < n; ++pos)
    for (const auto& r : reads[plan->order[pos]]) last_use[r] = pos;
  std::set<std::string> keep;
  for (const auto& o : graph.output()) keep.insert(o.name());
  plan->free_after.resize(n);
  plan->last_read.resize(n);
  plan->has_subgraph.resize(n);
  plan->input_slots.resize(n);
  plan->output_slots.resize(n);
  for (size_t i = 0; i < n; ++i)
    for (const auto& o : graph.node(static_cast<int>(i)).output())
      if (!o.empty() && plan->slot_of.emplace(o, plan->num_slots).second) ++plan->num_slots;
  auto slot = [&](const std::string& name) {
    auto it = plan->slot_of.find(name);
    return name.empty() || it == plan->slot_of.end() ? -1 : it->second;
  };
  for (size_t pos = 0; pos < n; ++pos) {
    const size_t i = plan->order[pos];
    const auto& node = graph.node(static_cast<int>(i));
    // Only values this graph owns are freed (feeds, initializers and outer values are not its).
    for (const auto& r : reads[i])
      if (last_use.at(r) == pos && !keep.count(r) && slot(r) >= 0)
        plan->free_after[i].push_back(slot(r));
    for (const auto& o : node.output())
      if (!o.empty() && !last_use.count(o) && !keep.count(o))
        plan->free_after[i].push_back(slot(o));
    for (const auto& in : node.input()) plan->input_slots[i].push_back(slot(in));
    for (const auto& o : node.output()) plan->output_slots[i].push_back(slot(o));
    bool has_subgraph = false;
    for (const auto& a : node.attribute())
      has_subgraph = has_subgraph || a.has_g() || a.graphs_size();
    plan->has_subgraph[i] = has_subgraph;
    for (const auto& in : node.input()) {
      const bool once = std::count(node.input().begin(), node.input().end(), in) == 1;
      plan->last_read[i].push_back(!in.empty() && !has_subgraph && once && last_use.at(in) == pos &&
                                   !keep.count(in));
    }
  }
  cached = std::move(plan);
  return *cached;
}

Expected<std::unique_ptr<Interpreter>> Interpreter::create(const onnx::ModelProto& model,
                                                           const std::filesystem::path& base_dir,
                                                           const InterpreterOptions& options) {
  keep_freed_memory();
  std::unique_ptr<Interpreter> in(new Interpreter());
  in->model_ = model;
  in->base_dir_ = base_dir;
  in->options_ = options;
  in->options_.threads = std::max(1, options.threads);
  in->pool_ = std::make_unique<ThreadPool>(in->options_.threads);
  if (const char* env = std::getenv("ONNXDBG_PROFILE"); env && std::string(env) == "1")
    in->options_.profile = true;
  in->opsets_ = opset_map(model);
  if (!in->opsets_.count("")) in->opsets_[""] = 1;
  ODB_RETURN_IF_ERROR(reject_sparse_initializers(model, "the reference interpreter"));
  auto missing = find_missing_kernels(in->model_);
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing)
      list +=
          (list.empty() ? "" : "; ") + m.to_string() + (m.reason.empty() ? "" : ": " + m.reason);
    return unsupported("the reference interpreter has no kernel or function body for " + list);
  }
  ScopedRunLimits limits(run_limits(in->options_, false));
  auto inits = in->initializers_of(in->model_.graph());
  if (!inits) return std::move(inits).status();
  return in;
}

Expected<const std::map<std::string, Value>*> Interpreter::initializers_of(
    const onnx::GraphProto& graph) {
  if (auto it = initializers_.find(&graph); it != initializers_.end()) return &it->second;
  std::map<std::string, Value> m;
  for (const auto& init : graph.initializer()) {
    const bool main = &graph == &model_.graph();
    auto where = [&] {
      return main ? "while reading initializers"
                  : "while reading initializers of graph '" + graph.name() + "'";
    };
    // Refused by its declared dims before any byte is read or allocated.
    if (auto dt = dtype_from_onnx(init.data_type()); dt && *dt != DType::kUndefined) {
      const Shape dims(init.dims().begin(), init.dims().end());
      const RunLimits* limits = current_run_limits();  // create's or a run's, maybe a caller's
      if (Status st = check_tensor_memory("initializer '" + init.name() + "'", *dt, dims,
                                          limits ? limits->max_memory : options_.max_memory);
          !st)
        return std::move(st).with_context(where());
    }
    auto t = tensor_from_proto(init, base_dir_);
    if (!t) return std::move(t).status().with_context(where());
    m.emplace(init.name(), std::move(*t));
  }
  return &(initializers_[&graph] = std::move(m));
}

Expected<std::map<std::string, Tensor>> Interpreter::run(
    const std::map<std::string, Tensor>& inputs, const NodeHook& hook) {
  std::map<std::string, Value> values;
  for (const auto& [name, t] : inputs) values.emplace(name, t);
  ODB_ASSIGN_OR_RETURN(auto outs, run_values(values, hook));
  std::map<std::string, Tensor> result;
  for (auto& [name, v] : outs) {
    if (!v.is_tensor())
      return unsupported("graph output '" + name + "' is " + v.kind_name() +
                         ", which this caller cannot take (it reads tensors only)");
    result.emplace(name, std::move(v.tensor()));
  }
  return result;
}

Status Interpreter::run_prefix(const std::map<std::string, Tensor>& inputs, const NodeHook& hook,
                               size_t end_node, const std::map<std::string, Tensor>* forced) {
  std::map<std::string, Value> values;
  for (const auto& [name, t] : inputs) values.emplace(name, t);
  main_end_node_ = end_node;
  forced_ = forced;
  auto outs = run_values(values, hook);
  main_end_node_ = SIZE_MAX;
  forced_ = nullptr;
  return outs ? Status::ok() : outs.status();
}

Expected<std::map<std::string, Value>> Interpreter::run_values(
    const std::map<std::string, Value>& inputs, const NodeHook& hook) {
  const auto& g = model_.graph();
  ODB_ASSIGN_OR_RETURN(const auto* inits, initializers_of(g));
  std::map<std::string, const Value*> feeds;
  std::set<std::string> declared;
  for (const auto& vi : g.input()) {
    declared.insert(vi.name());
    auto it = inputs.find(vi.name());
    if (it == inputs.end()) {
      if (inits->count(vi.name())) continue;  // an initializer gives the default
      return invalid_argument("graph input '" + vi.name() + "' was not provided");
    }
    const Value& given = it->second;
    if (auto kind = declared_kind(vi.type()); kind && *kind != given.kind())
      return invalid_argument("graph input '" + vi.name() + "' is declared as " +
                              value_kind_name(*kind) + " but was given " + given.kind_name());
    feeds[vi.name()] = &given;
    if (!given.is_tensor()) continue;
    const Tensor& t = given.tensor();
    const auto sig = value_signature(vi);
    if (sig.dtype != DType::kUndefined && t.dtype() != sig.dtype)
      return invalid_argument("graph input '" + vi.name() + "' is declared " +
                              std::string(dtype_name(sig.dtype)) + " but was given " +
                              std::string(dtype_name(t.dtype())));
    if (sig.has_shape) {
      const auto& shape = t.shape();
      bool ok = shape.size() == sig.shape.size();
      for (size_t d = 0; ok && d < shape.size(); ++d)
        ok = sig.shape[d] < 0 || sig.shape[d] == shape[d];
      if (!ok) {
        std::string decl;
        for (size_t d = 0; d < sig.shape.size(); ++d)
          decl += (d ? "x" : "") + (sig.shape[d] >= 0
                                        ? std::to_string(sig.shape[d])
                                        : (sig.dim_params[d].empty() ? "?" : sig.dim_params[d]));
        return invalid_argument("graph input '" + vi.name() + "' has shape " +
                                shape_to_string(shape) + " but the model declares " +
                                (decl.empty() ? "scalar" : decl));
      }
    }
  }
  for (const auto& [name, v] : inputs)
    if (!declared.count(name))
      return invalid_argument("'" + name + "' is not an input of the model");
  random_.run_seed = options_.random_seed;
  random_.draws.clear();
  ScopedRunLimits limits(run_limits(options_, true));
  RunWatch watch;  // a progress line when the run takes long (after the limits: it reads them)
  ScopedThreadPool threads(pool_.get());
  ODB_ASSIGN_OR_RETURN(auto outs, run_graph(g, nullptr, feeds, hook ? &hook : nullptr, opsets_, 0));
  std::map<std::string, Value> result;
  if (outs.empty()) return result;  // run_prefix stopped before the end
  for (int i = 0; i < g.output_size(); ++i)
    result[g.output(i).name()] = std::move(outs[static_cast<size_t>(i)]);
  return result;
}

Expected<std::vector<Value>> Interpreter::run_function(const onnx::NodeProto& node, int64_t opset,
                                                       const std::vector<const Value*>& inputs,
                                                       const OpsetMap& opsets, int depth) {
  if (depth > 16)
    return unsupported("function bodies nest more than 16 deep; refusing to expand " +
                       node.op_type());
  // Context-dependent bodies depend on the input types, so those are part of the key.
  std::ostringstream key;
  key << static_cast<const void*>(&node) << '@' << opset;
  std::vector<onnx::TypeProto> types;
  for (const Value* v : inputs) {
    types.push_back(v ? type_of(*v) : onnx::TypeProto());
    key << '|' << types.back().SerializeAsString();
  }
  auto it = functions_.find(key.str());
  if (it == functions_.end()) {
    ODB_ASSIGN_OR_RETURN(FunctionGraph fg, build_function_graph(node, opset, types, opsets));
    it = functions_.emplace(key.str(), std::make_unique<FunctionGraph>(std::move(fg))).first;
  }
  const FunctionGraph& fg = *it->second;
  std::map<std::string, const Value*> feeds;
  for (int j = 0; j < fg.graph.input_size(); ++j)
    feeds[fg.graph.input(j).name()] =
        inputs[static_cast<size_t>(fg.fed_inputs[static_cast<size_t>(j)])];
  // The body runs in a scope of its own: a function sees only its inputs.
  auto outs = run_graph(fg.graph, nullptr, feeds, nullptr, fg.opsets, depth + 1);
  if (!outs)
    return std::move(outs).status().with_context("while running the function body of " +
                                                 node.op_type() + " at opset " +
                                                 std::to_string(opset));
  std::vector<Value> result(static_cast<size_t>(node.output_size()));
  for (size_t j = 0; j < outs->size(); ++j)
    result[static_cast<size_t>(fg.returned_outputs[j])] = std::move((*outs)[j]);
  return result;
}

// The inputs of one node: widened copies where its kernel computes in another type (float16 and
// bfloat16 in float32 for HalfMode::kViaFloat32, bfloat16 alone for kNativeFloat16;
// float32/float16/bfloat16 in float64 for accumulating ops under Accumulate::kDouble). Outputs of
// `wide_type` are rounded once back to `narrow_type`, the first widened input's type.
struct Interpreter::NodeInputs {
  std::vector<Value> upcast;  // reserved at the first widened input, so pointers into it stay
  DType narrow_type = DType::kUndefined, wide_type = DType::kUndefined;
};

Status Interpreter::gather_inputs(const onnx::NodeProto& node, size_t i, const GraphPlan& plan,
                                  Scope& scope, const KernelDef* def, KernelScratch& scratch,
                                  NodeInputs& in) {
  const bool widen_double = def && def->accumulates && options_.accumulate == Accumulate::kDouble;
  auto wider_type = [&](DType t) {
    const bool half = t == DType::kFloat16 || t == DType::kBFloat16;
    if (widen_double && (half || t == DType::kFloat)) return DType::kDouble;
    if (def && def->half_mode == HalfMode::kViaFloat32 && half) return DType::kFloat;
    if (def && def->half_mode == HalfMode::kNativeFloat16 && t == DType::kBFloat16)
      return DType::kFloat;
    return DType::kUndefined;
  };
  // The node's inputs go into the graph run's scratch vectors (their memory kept from node to
  // node: KernelScratch).
  std::vector<const Value*>& ins = scratch.values;
  std::vector<Tensor*>& movable = scratch.movable;
  std::vector<uint8_t>& constant = scratch.constant;
  ins.clear();
  movable.clear();
  constant.clear();
  for (int k = 0; k < node.input_size(); ++k) {
    const std::string& name = node.input(k);
    if (name.empty()) {
      ins.push_back(nullptr);
      movable.push_back(nullptr);
      constant.push_back(0);
      continue;
    }
    const int slot = plan.input_slots[i][static_cast<size_t>(k)];
    Value* slot_value = slot >= 0 ? &scope.slots[static_cast<size_t>(slot)] : nullptr;
    bool initializer = false;
    const Value* v =
        slot_value && slot_value->defined() ? slot_value : scope.find(name, &initializer);
    if (!v)
      return model_error("input '" + name +
                         "' is undefined: no node, initializer or graph "
                         "input produces it before this node");
    Tensor* mov = nullptr;
    if (plan.last_read[i][static_cast<size_t>(k)] && slot_value && slot_value->is_tensor())
      mov = &slot_value->tensor();
    const Tensor* t = v->as_tensor();
    if (const DType to = t ? wider_type(t->dtype()) : DType::kUndefined; to != DType::kUndefined) {
      if (in.narrow_type == DType::kUndefined) {
        in.narrow_type = t->dtype();
        in.wide_type = to;
      }
      ODB_ASSIGN_OR_RETURN(Tensor f, cast_tensor(*t, to));
      // Room for every input at once, so that `ins` can point into it: reserved only by nodes
      // that widen something, to save the other nodes an allocation.
      if (in.upcast.empty()) in.upcast.reserve(static_cast<size_t>(node.input_size()));
      in.upcast.emplace_back(std::move(f));
      v = &in.upcast.back();
      mov = &in.upcast.back().tensor();
      initializer = false;  // a fresh copy on every run
    }
    ins.push_back(v);
    movable.push_back(mov);
    constant.push_back(initializer ? 1 : 0);
  }
  return Status::ok();
}

Status Interpreter::call_kernel(const onnx::NodeProto& node, size_t i, int64_t opset,
                                const KernelDef& def, const Scope& scope, bool has_subgraph,
                                const OpsetMap& opsets, int depth, KernelScratch& scratch,
                                std::vector<Value>& outs) {
  // Runners for subgraph attributes; nodes without any (nearly all) skip building them.
  ValueSubgraphRunner value_runner;
  SubgraphRunner runner;
  if (has_subgraph) {
    value_runner = [this, &scope, &opsets, depth](
                       const onnx::GraphProto& sub,
                       std::vector<Value> in) -> Expected<std::vector<Value>> {
      // Every Loop/Scan iteration passes here, bodies without nodes too.
      ODB_RETURN_IF_ERROR(check_run_limits());
      if (static_cast<int>(in.size()) > sub.input_size())
        return model_error("subgraph '" + sub.name() + "' takes " +
                           std::to_string(sub.input_size()) + " inputs, given " +
                           std::to_string(in.size()));
      std::map<std::string, const Value*> f;
      for (size_t k = 0; k < in.size(); ++k) {
        const auto& decl = sub.input(static_cast<int>(k));
        // A body input declared optional takes a plain tensor or sequence as a full optional:
        // Loop-16 bodies read optional(seq) state that their previous iteration returned as a
        // seq.
        if (decl.type().has_optional_type() && !in[k].is_optional() && in[k].defined())
          in[k] = Value::optional_of(std::move(in[k]));
        f[decl.name()] = &in[k];
      }
      return run_graph(sub, &scope, f, nullptr, opsets, depth);
    };
    runner = [&value_runner](const onnx::GraphProto& sub,
                             std::vector<Tensor> in) -> Expected<std::vector<Tensor>> {
      std::vector<Value> vin(std::make_move_iterator(in.begin()),
                             std::make_move_iterator(in.end()));
      ODB_ASSIGN_OR_RETURN(auto vout, value_runner(sub, std::move(vin)));
      std::vector<Tensor> tout;
      for (size_t k = 0; k < vout.size(); ++k) {
        if (!vout[k].is_tensor())
          return model_error("output " + std::to_string(k) + " of subgraph '" + sub.name() +
                             "' is " + vout[k].kind_name() + "; this op takes tensors only");
        tout.push_back(std::move(vout[k].tensor()));
      }
      return tout;
    };
  }
  // Copies: `runner` calls value_runner by reference, so the original stays here.
  KernelContext ctx(node, opset, scratch, runner, value_runner);
  ctx.set_random_source(&random_, i);
  ctx.set_kernel_states(&kernel_states_);
  Status st;
  try {
    st = def.fn(ctx);
  } catch (const std::bad_alloc&) {
    st = invalid_argument(out_of_memory_message("a tensor of this node"));
  } catch (const std::length_error&) {
    st = invalid_argument(out_of_memory_message("a tensor of this node"));
  }
  // A long kernel that saw the deadline pass stopped early (run_should_stop) and left its
  // outputs unfinished: the run ends here.
  if (st.is_ok()) st = check_run_limits();
  if (!st.is_ok()) return st;
  for (size_t k = 0; k < static_cast<size_t>(node.output_size()); ++k)
    outs.push_back(ctx.take_output(k));
  ctx.return_scratch(scratch);
  return Status::ok();
}

Status Interpreter::store_outputs(const onnx::NodeProto& node, size_t i, const GraphPlan& plan,
                                  Scope& scope, const NodeInputs& in, bool kernel,
                                  const NodeHook* hook, std::vector<Value>& outs) {
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::string& name = node.output(static_cast<int>(k));
    if (name.empty()) continue;
    Value& out = outs[k];
    if (!out.defined())
      return internal_error(std::string(kernel ? "kernel" : "function body") +
                            " produced no value for output '" + name + "'");
    if (in.narrow_type != DType::kUndefined && out.is_tensor() &&
        out.tensor().dtype() == in.wide_type) {
      // float64 rounded once (cast_tensor)
      ODB_ASSIGN_OR_RETURN(Tensor h, cast_tensor(out.tensor(), in.narrow_type));
      out = Value(std::move(h));
    }
    if (hook && *hook && out.is_tensor()) (*hook)(node, i, name, out.tensor());
    if (forced_ && scope.parent == nullptr && out.is_tensor())
      if (auto f = forced_->find(name); f != forced_->end() &&
                                        f->second.dtype() == out.tensor().dtype() &&
                                        f->second.shape() == out.tensor().shape())
        out = Value(f->second);
    scope.slots[static_cast<size_t>(plan.output_slots[i][k])] = std::move(out);
  }
  return Status::ok();
}

Expected<std::vector<Value>> Interpreter::run_graph(
    const onnx::GraphProto& graph, const Scope* parent,
    const std::map<std::string, const Value*>& feeds, const NodeHook* hook, const OpsetMap& opsets,
    int depth) {
  Scope scope;
  scope.parent = parent;
  ODB_ASSIGN_OR_RETURN(const auto* inits, initializers_of(graph));
  scope.initializers = inits;
  for (const auto& [name, v] : feeds) scope.borrowed[name] = v;

  const GraphPlan& plan = plan_of(graph, opsets);
  scope.plan = &plan;
  scope.slots.resize(static_cast<size_t>(plan.num_slots));
  const size_t all_nodes = static_cast<size_t>(graph.node_size());
  // run_prefix: the main graph stops early and returns no outputs.
  const bool main_graph = depth == 0 && parent == nullptr && &graph == &model_.graph();
  const size_t n_nodes = main_graph ? std::min(all_nodes, main_end_node_) : all_nodes;

  const std::string graph_label = graph.name().empty() ? "main" : graph.name();
  if (!plan.order_error.is_ok())
    return Status(plan.order_error)
        .with_context("while ordering the nodes of graph '" + graph_label + "'");
  // Profiling times top-level nodes only (subgraph and body nodes count in their caller).
  const bool timed = options_.profile && parent == nullptr && depth == 0;
  KernelScratch scratch;
  std::vector<Value> outs;  // the current node's outputs (memory kept from node to node)
  RunActivity* activity = main_graph ? current_activity() : nullptr;
  for (size_t pos = 0; pos < n_nodes; ++pos) {
    const size_t i = plan.order[pos];
    const auto& node = graph.node(static_cast<int>(i));
    note_node(activity, node, i);
    auto context = [&] {
      return "while running node " + std::to_string(i) + " '" + node.name() + "' (" +
             node.op_type() + ") of graph '" + graph_label + "'";
    };
    const int64_t opset = plan.opsets[i];
    const KernelDef* def = plan.kernels[i];
    Status st = check_run_limits();
    NodeInputs in;
    if (st.is_ok()) st = gather_inputs(node, i, plan, scope, def, scratch, in);
    if (!st.is_ok()) return std::move(st).with_context(context());

    const auto t0 =
        timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    outs.clear();
    if (!def) {
      // No kernel: the load-time check found a function body (a kernel always wins).
      auto r = run_function(node, opset, scratch.values, opsets, depth);
      if (!r) return std::move(r).status().with_context(context());
      outs = std::move(*r);
    } else if (Status k = call_kernel(node, i, opset, *def, scope, plan.has_subgraph[i], opsets,
                                      depth, scratch, outs);
               !k.is_ok()) {
      return std::move(k).with_context(context());
    }
    if (timed) {
      const std::string domain = canonical_domain(node.domain());
      auto& p = profile_[{domain, node.op_type()}];
      p.domain = domain;
      p.op_type = node.op_type();
      ++p.calls;
      p.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (Status o = store_outputs(node, i, plan, scope, in, def != nullptr, hook, outs); !o.is_ok())
      return std::move(o).with_context(context());
    // Free what no later node of this graph reads.
    for (int slot : plan.free_after[i]) scope.slots[static_cast<size_t>(slot)] = Value();
  }
  if (n_nodes < all_nodes) return std::vector<Value>{};

  return scope.take_outputs(graph, graph_label);
}

}  // namespace onnxdbg::reference
