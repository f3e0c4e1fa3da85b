// The HTML model viewer: turns a model (plus optional run report, diff and lint findings) into
// the page's JSON data and the page itself. The page's assets (src/report/viewer/*) and the
// dagre layout library are embedded by CMake into viewer_assets.cpp at build time.
#include "report/viewer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/atomic_file.h"
#include "core/numel.h"
#include "core/onnx.h"
#include "inspect/inspect.h"
#include "model/graph.h"
#include "model/shape_inference.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "onnxdbg/dtype.h"

namespace onnxdbg::report {

// Defined in the generated viewer_assets.cpp.
std::string viewer_asset(std::string_view name);
bool viewer_asset_has_dagre();

bool viewer_has_layout_library() { return viewer_asset_has_dagre(); }

namespace {

using nlohmann::json;

struct TypeInfo {
  std::string dtype, shape;
};

std::string type_dtype(const onnx::TypeProto& t) {
  if (t.has_tensor_type() && t.tensor_type().elem_type() != 0) {
    auto d = dtype_from_onnx(t.tensor_type().elem_type());
    return d ? std::string(dtype_name(*d)) : "?";
  }
  if (t.has_sequence_type()) return "sequence";
  if (t.has_map_type()) return "map";
  if (t.has_optional_type()) return "optional";
  return "";
}

std::string type_shape(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return "";
  std::string s = "[";
  const auto& sh = t.tensor_type().shape();
  for (int i = 0; i < sh.dim_size(); ++i) {
    if (i) s += ", ";
    const auto& d = sh.dim(i);
    if (d.has_dim_value())
      s += std::to_string(d.dim_value());
    else if (d.has_dim_param() && !d.dim_param().empty())
      s += d.dim_param();
    else
      s += "?";
  }
  return s + "]";
}

void record(std::unordered_map<std::string, TypeInfo>& types, const onnx::ValueInfoProto& vi) {
  if (vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
  TypeInfo ti{type_dtype(vi.type()), type_shape(vi.type())};
  auto& slot = types[vi.name()];
  if (slot.dtype.empty() || (!ti.shape.empty() && slot.shape.empty())) slot = ti;
}

void collect_types(const onnx::GraphProto& g, std::unordered_map<std::string, TypeInfo>& types) {
  for (const auto& vi : g.input()) record(types, vi);
  for (const auto& vi : g.output()) record(types, vi);
  for (const auto& vi : g.value_info()) record(types, vi);
  for (const auto& t : g.initializer()) {
    auto d = dtype_from_onnx(t.data_type());
    std::string s = "[";
    for (int i = 0; i < t.dims_size(); ++i) s += (i ? ", " : "") + std::to_string(t.dims(i));
    types[t.name()] = {d ? std::string(dtype_name(*d)) : "?", s + "]"};
  }
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_types(a.g(), types);
      for (const auto& sg : a.graphs()) collect_types(sg, types);
    }
}

// Every node output gets a placeholder value_info (an empty TypeProto that inference fills):
// ONNX 1.12's data propagation dereferences a missing type and crashes (see lint/rule.cpp, which
// does the same). Large float weights lose their values: inference needs only type and dims.
void prepare(onnx::GraphProto& g) {
  std::set<std::string> placed;
  for (const auto& vi : g.input()) placed.insert(vi.name());
  for (const auto& vi : g.output()) placed.insert(vi.name());
  for (const auto& vi : g.value_info()) placed.insert(vi.name());
  for (const auto& t : g.initializer()) placed.insert(t.name());
  for (auto& t : *g.mutable_initializer()) {
    const int64_t numel = saturating_numel(t.dims());
    const int dt = t.data_type();
    if (numel > 4096 && (dt == onnx::TensorProto::FLOAT || dt == onnx::TensorProto::DOUBLE ||
                         dt == onnx::TensorProto::FLOAT16 || dt == onnx::TensorProto::BFLOAT16)) {
      t.clear_raw_data();
      t.clear_float_data();
      t.clear_double_data();
      t.clear_int32_data();
      t.clear_external_data();
      t.clear_data_location();
    }
  }
  for (auto& n : *g.mutable_node()) {
    for (const auto& o : n.output())
      if (!o.empty() && placed.insert(o).second) {
        auto* vi = g.add_value_info();
        vi->set_name(o);
        vi->mutable_type();
      }
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) prepare(*a.mutable_g());
      for (auto& sg : *a.mutable_graphs()) prepare(sg);
    }
  }
}

// Declared types first, then whatever inference adds (non-strict: a node it cannot infer keeps
// what was declared, the rest of the graph is still inferred).
std::unordered_map<std::string, TypeInfo> infer_types(const LoadedModel& model) {
  std::unordered_map<std::string, TypeInfo> types;
  collect_types(model.proto.graph(), types);
  onnx::ModelProto copy = model.proto;
  prepare(*copy.mutable_graph());
  if (!run_onnx_shape_inference(copy, /*strict=*/false).empty())
    return types;  // declared shapes only (inference failed or crashed)
  collect_types(copy.graph(), types);
  return types;
}

json weight_json(const WeightSummary& w) {
  json j{{"dtype", std::string(dtype_name(w.dtype))},
         {"shape", w.shape},
         {"bytes", w.bytes},
         {"source", w.source}};
  if (w.has_stats) {
    j["min"] = w.min;
    j["max"] = w.max;
    j["mean"] = w.mean;
    j["std"] = w.std;
  }
  if (w.nan_count) j["nan"] = w.nan_count;
  if (w.inf_count) j["inf"] = w.inf_count;
  if (w.external) j["external"] = true;
  if (!w.error.empty()) j["error"] = w.error;
  return j;
}

double finite_or(const json& v, double fallback) {
  return v.is_number() ? v.get<double>() : fallback;
}

struct Builder {
  json graphs = json::array();
  json nodes = json::array();
  json tensors = json::array();
  std::unordered_map<std::string, int64_t> tensor_index;
  std::unordered_map<std::string, TypeInfo> types;
  std::unordered_map<std::string, const WeightSummary*> weights;
  std::unordered_map<std::string, int64_t> graph_by_path;
  // node name -> node index (main graph first so a duplicate in a subgraph does not shadow it)
  std::unordered_map<std::string, int64_t> node_by_name;

  int64_t tensor(const std::string& name) {
    if (name.empty()) return -1;
    auto it = tensor_index.find(name);
    if (it != tensor_index.end()) return it->second;
    json t{{"n", name}};
    auto ti = types.find(name);
    t["t"] = ti == types.end() ? "" : ti->second.dtype;
    t["s"] = ti == types.end() ? "" : ti->second.shape;
    t["k"] = "";
    auto w = weights.find(name);
    if (w != weights.end()) t["w"] = weight_json(*w->second);
    const int64_t idx = static_cast<int64_t>(tensors.size());
    tensors.push_back(std::move(t));
    tensor_index.emplace(name, idx);
    return idx;
  }

  // `path_prefix`: "" in the main graph; in a subgraph the prefix of the name its nodes get when
  // the If owning it is inlined (surgeon::inline_if_branch: "outer/then_branch/"), which the
  // layerwise pass reports nodes inside branches by; registered as another name of the node.
  int64_t add_node(const NodeSummary& n, int64_t g, const std::string& path_prefix = "") {
    json j{{"g", g}, {"x", n.index}, {"n", n.name}, {"o", n.op_type}};
    if (!n.domain.empty() && n.domain != "ai.onnx") j["d"] = n.domain;
    json in = json::array(), out = json::array(), attrs = json::array();
    for (const auto& i : n.inputs) in.push_back(tensor(i));
    for (const auto& o : n.outputs) out.push_back(tensor(o));
    for (const auto& a : n.attributes)
      if (a.type != "graph" && a.type != "graphs") attrs.push_back({a.name, a.type, a.value});
    j["i"] = std::move(in);
    j["u"] = std::move(out);
    j["a"] = std::move(attrs);
    j["s"] = json::array();
    const int64_t idx = static_cast<int64_t>(nodes.size());
    nodes.push_back(std::move(j));
    if (!path_prefix.empty())
      node_by_name.emplace(
          path_prefix + (n.name.empty() ? n.op_type + "#" + std::to_string(n.index) : n.name), idx);
    if (!n.name.empty()) node_by_name.emplace(n.name, idx);
    return idx;
  }

  void add_graph(const GraphSummary& gs, const std::string& path, int64_t parent,
                 const std::string& attribute, const std::string& path_prefix = "") {
    const int64_t g = static_cast<int64_t>(graphs.size());
    graphs.push_back(
        {{"name", gs.name}, {"path", path}, {"parent", parent}, {"attribute", attribute}});
    graph_by_path[path] = g;
    std::vector<std::pair<int64_t, const NodeSummary*>> with_subgraphs;
    for (const auto& n : gs.nodes) {
      const int64_t idx = add_node(n, g, path_prefix);
      if (!n.subgraphs.empty()) with_subgraphs.emplace_back(idx, &n);
    }
    // Subgraph nodes come after all of their parent graph's nodes, so each graph's nodes are
    // contiguous and the page can chunk the main graph by index.
    for (const auto& [idx, n] : with_subgraphs)
      for (const auto& sg : n->subgraphs) {
        nodes[static_cast<size_t>(idx)]["s"].push_back(static_cast<int64_t>(graphs.size()));
        add_graph(sg.graph.front(),
                  subgraph_path(path, n->name, n->op_type, n->index, sg.attribute), idx,
                  sg.attribute,
                  path_prefix +
                      (n->name.empty() ? n->op_type + "#" + std::to_string(n->index) : n->name) +
                      "/" + sg.attribute + "/");
      }
  }
};

// One model into `b`: its graphs, nodes (main graph first, in file order), tensors with inferred
// types and weight statistics, and the kinds of the main graph's inputs, outputs and weights.
Expected<ModelSummary> build_model(Builder& b, const LoadedModel& model) {
  if (!model.proto.has_graph()) return model_error("the model has no graph");
  InspectOptions opt;
  opt.layers = opt.attributes = opt.weights = true;
  auto summary = summarize_model(model, opt);
  if (!summary) return summary.status();
  b.types = infer_types(model);
  for (const auto& w : summary->weights) b.weights.emplace(w.name, &w);
  b.add_graph(summary->graph, "main", -1, "");
  const auto& g = model.proto.graph();
  auto kind = [&](const std::string& name, const char* k) {
    // A nameless graph input or output (a broken model, which lint reports) has no tensor.
    const int64_t t = b.tensor(name);
    if (t >= 0) b.tensors[static_cast<size_t>(t)]["k"] = k;
  };
  for (const auto& vi : g.input()) kind(vi.name(), "in");
  for (const auto& t : g.initializer())
    if (b.tensor_index.count(t.name())) kind(t.name(), "w");
  for (const auto& vi : g.output()) kind(vi.name(), "out");
  b.weights.clear();  // they point into the summary, which the caller may drop
  return summary;
}

// Per-node error of a run result on the page: the worst over backends; own_error where the
// layerwise entry has one.
struct NodeErr {
  double err = -1, abs = -1, rel = -1, own = -1;
  double steps = -1;        // max_error_steps, in step_dtype's steps (-1: none)
  double dequantized = -1;  // max_dequantized_error of a quantized tensor (-1: not quantized)
  std::string step_dtype;   // the low-precision type the error is also counted in
  std::string backend, tensor;
  std::string note;  // the entry's note (onnxdbg.torch: the module the node belongs to)
  bool pass = true, nan = false;
};

// One result's errors painted on the page's nodes (add_report).
class ReportPainter {
 public:
  ReportPainter(Builder& b, const json& rep)
      : b_(b),
        rep_(rep),
        has_layerwise_(rep.contains("layerwise") && rep["layerwise"].is_array()) {}

  json paint();

 private:
  int64_t producer(const std::string& tensor) const;
  int64_t node_of(const json& e) const;
  void take_tolerances(const json& e) {
    if (atol_ < 0 && e.contains("atol") && e["atol"].is_number()) atol_ = e["atol"].get<double>();
    if (rtol_ < 0 && e.contains("rtol") && e["rtol"].is_number()) rtol_ = e["rtol"].get<double>();
  }
  void absorb(const json& e, bool layerwise);
  std::vector<std::pair<double, int64_t>> mark_nodes();
  json worst(const std::vector<std::pair<double, int64_t>>& order);

  Builder& b_;
  const json& rep_;
  const bool has_layerwise_;
  double atol_ = -1, rtol_ = -1;
  std::map<int64_t, NodeErr> errs_;
};

int64_t ReportPainter::producer(const std::string& tensor) const {
  auto it = b_.tensor_index.find(tensor);
  if (it == b_.tensor_index.end()) return -1;
  for (size_t i = 0; i < b_.nodes.size(); ++i)
    for (const auto& u : b_.nodes[i]["u"])
      if (u.get<int64_t>() == it->second) return static_cast<int64_t>(i);
  return -1;
}

// The page's node a result entry speaks of: by node name (a node of an unrolled Loop body,
// "loop/body/Add_2 [iter 4]", is the body's node), else by the tensor's producer; -1 if none.
int64_t ReportPainter::node_of(const json& e) const {
  for (const char* k : {"node", "producer", "producer_node"})
    if (e.contains(k) && e[k].is_string()) {
      const std::string& name = e[k].get_ref<const std::string&>();
      auto it = b_.node_by_name.find(name);
      const size_t iter = name.rfind(" [iter ");
      if (it == b_.node_by_name.end() && iter != std::string::npos && name.back() == ']')
        it = b_.node_by_name.find(name.substr(0, iter));
      if (it != b_.node_by_name.end()) return it->second;
    }
  for (const char* k : {"tensor", "output"})
    if (e.contains(k) && e[k].is_string()) {
      const int64_t p = producer(e[k].get<std::string>());
      if (p >= 0) return p;
    }
  return -1;
}

void ReportPainter::absorb(const json& e, bool layerwise) {
  take_tolerances(e);
  const int64_t n = node_of(e);
  if (n < 0) return;
  NodeErr ne;
  const double inf = std::numeric_limits<double>::infinity();
  ne.abs = e.contains("max_abs_error") ? finite_or(e["max_abs_error"], inf) : -1;
  ne.rel = e.contains("max_rel_error") ? finite_or(e["max_rel_error"], inf) : -1;
  ne.step_dtype = json_string(e, "step_dtype");
  ne.steps = !ne.step_dtype.empty() && e.contains("max_error_steps")
                 ? finite_or(e["max_error_steps"], inf)
                 : -1;
  ne.dequantized = e.contains("max_dequantized_error") && e["max_dequantized_error"].is_number()
                       ? e["max_dequantized_error"].get<double>()
                       : -1;
  ne.own = layerwise && e.contains("own_error") && !e["own_error"].is_null()
               ? finite_or(e["own_error"], inf)
               : -1;
  ne.err = ne.own >= 0 ? ne.own : ne.abs;
  ne.backend = json_string(e, "backend");
  ne.tensor = json_string(e, "tensor", json_string(e, "output"));
  if (e.contains("note") && e["note"].is_string()) ne.note = e["note"].get<std::string>();
  ne.pass = json_bool(e, "pass", true);
  ne.nan = e.contains("nan_or_inf") &&
           ((e["nan_or_inf"].is_boolean() && e["nan_or_inf"].get<bool>()) ||
            (e["nan_or_inf"].is_number() && e["nan_or_inf"].get<double>() > 0));
  auto& cur = errs_[n];
  if (cur.err < 0 || ne.err > cur.err || (ne.err == cur.err && !ne.pass)) {
    const bool was_fail = !cur.pass && cur.err >= 0;
    cur = ne;
    cur.pass = ne.pass && !was_fail;
  } else if (!ne.pass) {
    cur.pass = false;
  }
  if (ne.nan) cur.nan = true;
}

// Each node's error as the page's "e" entry; returns (error, node) for every node with one.
std::vector<std::pair<double, int64_t>> ReportPainter::mark_nodes() {
  std::vector<std::pair<double, int64_t>> order;
  auto to_json = [](double v) {
    return v < 0 ? json(nullptr) : std::isinf(v) ? json("inf") : json(v);
  };
  for (const auto& [n, e] : errs_) {
    json ej{{"err", to_json(e.err)}, {"abs", to_json(e.abs)}, {"rel", to_json(e.rel)},
            {"own", to_json(e.own)}, {"backend", e.backend},  {"tensor", e.tensor},
            {"pass", e.pass},        {"nan", e.nan}};
    if (!e.note.empty()) ej["note"] = e.note;
    if (e.steps >= 0) ej["steps"] = {to_json(e.steps), e.step_dtype};
    if (e.dequantized >= 0) ej["deq"] = e.dequantized;
    b_.nodes[static_cast<size_t>(n)]["e"] = std::move(ej);
    order.emplace_back(e.err, n);
  }
  std::stable_sort(order.begin(), order.end(), [](auto& x, auto& y) { return x.first > y.first; });
  return order;
}

// The worst nodes as the CLI ranks them, so that the page and the terminal agree: with
// layerwise, each backend's ranking of its failing tensors (layerwise_summary.backends[].worst:
// own failures first), backends in order, each node once; without, the nodes of the failing
// outputs by error. A passing node is never among the worst.
json ReportPainter::worst(const std::vector<std::pair<double, int64_t>>& order) {
  json worst = json::array();
  std::set<int64_t> listed;
  // `label`: how the result names the node ("#4 Mul 'outer/then_branch/Mul_1'" for a node the
  // layerwise pass met inside an If branch), shown in place of the page's own label.
  auto list = [&](int64_t n, const std::string& backend, const std::string& tensor,
                  const json& source, const json& label) {
    if (n < 0 || worst.size() >= 20 || !listed.insert(n).second) return;
    worst.push_back({{"index", n},
                     {"backend", backend},
                     {"tensor", tensor},
                     {"source", source},
                     {"label", label}});
  };
  const json none = json::array();
  if (has_layerwise_ && rep_.contains("layerwise_summary") &&
      rep_["layerwise_summary"].is_object()) {
    const json& backends = rep_["layerwise_summary"].value("backends", none);
    for (const auto& bj : backends.is_array() ? backends : none) {
      const json& ranked = bj.is_object() ? bj.value("worst", none) : none;
      for (const auto& w : ranked.is_array() ? ranked : none)
        if (w.is_object())
          list(node_of(w), json_string(bj, "backend"), json_string(w, "tensor"),
               w.value("error_source", json(nullptr)), w.value("label", json(nullptr)));
    }
  } else {
    for (const auto& [err, n] : order)
      if (!errs_[n].pass) list(n, errs_[n].backend, errs_[n].tensor, nullptr, nullptr);
  }
  return worst;
}

json ReportPainter::paint() {
  json out{{"verdict", json_string(rep_, "verdict")},
           {"verdict_line", json_string(rep_, "verdict_line")},
           {"error_stat", json_string(rep_, "error_stat")}};
  if (has_layerwise_)
    for (const auto& e : rep_["layerwise"]) absorb(e, true);
  if (rep_.contains("comparisons") && rep_["comparisons"].is_array())
    for (const auto& e : rep_["comparisons"]) {
      if (has_layerwise_ && node_of(e) < 0) continue;
      if (has_layerwise_ && errs_.count(node_of(e)))
        take_tolerances(e);
      else
        absorb(e, false);
    }
  out["worst"] = worst(mark_nodes());
  out["atol"] = atol_ < 0 ? json(nullptr) : json(atol_);
  out["rtol"] = rtol_ < 0 ? json(nullptr) : json(rtol_);
  out["layerwise"] = has_layerwise_;
  // What colours the nodes: own errors where the layerwise pass isolated nodes, else the total.
  const bool own =
      std::any_of(errs_.begin(), errs_.end(), [](const auto& e) { return e.second.own >= 0; });
  out["colour_basis"] = own ? "own" : has_layerwise_ ? "total" : "outputs";
  // The first divergent node is the one the result names, never a guess: the page says "none"
  // when the layerwise pass found none, as the terminal does.
  if (rep_.contains("first_divergent_node") && rep_["first_divergent_node"].is_object()) {
    const auto& f = rep_["first_divergent_node"];
    json fj = f;
    fj["index"] = node_of(f);
    out["first"] = std::move(fj);
  }
  return out;
}

void add_report(Builder& b, const json& rep, json& data) {
  data["report"] = ReportPainter(b, rep).paint();
}

// The other model whole, for the side-by-side layout: its graphs, nodes and tensors appended
// after the viewed model's with every index shifted, so nothing is shared with the viewed side.
// Returns the index of its main graph.
int64_t append_side(Builder& a, Builder& side) {
  const int64_t g0 = static_cast<int64_t>(a.graphs.size());
  const int64_t n0 = static_cast<int64_t>(a.nodes.size());
  const int64_t t0 = static_cast<int64_t>(a.tensors.size());
  for (auto& g : side.graphs) {
    if (g["parent"].get<int64_t>() >= 0) g["parent"] = g["parent"].get<int64_t>() + n0;
    a.graphs.push_back(std::move(g));
  }
  auto shift = [](json& list, int64_t by) {
    for (auto& v : list)
      if (v.get<int64_t>() >= 0) v = v.get<int64_t>() + by;
  };
  for (auto& n : side.nodes) {
    n["g"] = n["g"].get<int64_t>() + g0;
    shift(n["i"], t0);
    shift(n["u"], t0);
    shift(n["s"], g0);
    a.nodes.push_back(std::move(n));
  }
  for (auto& t : side.tensors) a.tensors.push_back(std::move(t));
  return g0;
}

Status add_diff(Builder& b, const ModelDiff& d, const LoadedModel* other, DiffLayout layout,
                json& data) {
  // The main graph's nodes come first, in file order: A's node i is page node i.
  const int64_t limit = static_cast<int64_t>(b.nodes.size());
  auto main_node = [&](int64_t i) {
    return i >= 0 && i < limit && b.nodes[static_cast<size_t>(i)]["g"] == 0 ? i : -1;
  };
  for (size_t i = 0; i < d.a_to_b.size(); ++i)
    if (d.a_to_b[i] < 0 && main_node(static_cast<int64_t>(i)) >= 0) b.nodes[i]["df"] = "a";
  std::map<int64_t, std::vector<std::string>> changed_at;  // A node index -> what changed
  for (const auto& c : d.changed) {
    const int64_t n = main_node(c.node);
    if (n < 0) continue;
    auto& node = b.nodes[static_cast<size_t>(n)];
    if (!node.contains("df")) node["df"] = "c";
    node["dw"].push_back(c.what);
    changed_at[n].push_back(c.what);
  }
  int64_t side_graph = -1;
  // Nodes only in B join the main graph, wired by tensor names, after A's main-graph nodes would
  // break contiguity; they go at the end with graph 0 and the page sorts main-graph nodes.
  if (other && other->proto.has_graph()) {
    auto summary = summarize_model(*other, {true, true, false});
    if (summary) {
      const auto& nodes = summary->graph.nodes;
      for (const auto& n : nodes) {
        const auto k = static_cast<size_t>(n.index);
        if (k >= d.b_to_a.size() || d.b_to_a[k] >= 0) continue;
        NodeSummary copy = n;
        copy.subgraphs.clear();
        const int64_t idx = b.add_node(copy, 0);
        b.nodes[static_cast<size_t>(idx)]["df"] = "b";
        b.nodes[static_cast<size_t>(idx)]["bi"] = n.index;  // position in B, for ordering
      }
    }
    // The side-by-side layout: B whole, its main-graph nodes in file order first (so B node j
    // lands at index base + j), marked like A's and paired with their matches.
    Builder side;
    auto side_summary = build_model(side, *other);
    if (!side_summary) return side_summary.status();
    const int64_t base = static_cast<int64_t>(b.nodes.size());
    const int64_t b_main = static_cast<int64_t>(other->proto.graph().node_size());
    std::vector<bool> matched(static_cast<size_t>(b_main), false);
    for (size_t i = 0; i < d.a_to_b.size() && static_cast<int64_t>(i) < limit; ++i) {
      const int64_t j = d.a_to_b[i];
      if (j < 0 || j >= b_main) continue;
      matched[static_cast<size_t>(j)] = true;
      b.nodes[i]["p"] = base + j;
      auto& bn = side.nodes[static_cast<size_t>(j)];
      bn["p"] = static_cast<int64_t>(i);
      auto ch = changed_at.find(static_cast<int64_t>(i));
      if (ch != changed_at.end()) {
        bn["df"] = "c";
        bn["dw"] = ch->second;
      }
    }
    for (int64_t j = 0; j < b_main; ++j)
      if (!matched[static_cast<size_t>(j)]) side.nodes[static_cast<size_t>(j)]["df"] = "b";
    side_graph = append_side(b, side);
  }
  json graph = json::array();
  for (const auto& c : d.graph_changes) graph.push_back({c.item, c.what});
  json changed = json::array();
  for (const auto& c : d.changed) changed.push_back({c.item, c.what});
  data["diff"] = {
      {"summary", d.summary},
      {"a", d.a_name},
      {"b", d.b_name},
      {"only_in_a", d.only_in_a.size()},
      {"only_in_b", d.only_in_b.size()},
      {"changed", std::move(changed)},
      {"graph", std::move(graph)},
      {"layout", layout == DiffLayout::kSideBySide && side_graph >= 0 ? "side" : "merged"},
      {"side_graph", side_graph}};
  return Status::ok();
}

void add_lint(Builder& b, const std::vector<lint::Finding>& findings, json& data) {
  json model_findings = json::array();
  auto counts = lint::count_findings(findings);
  for (const auto& f : findings) {
    const std::string sev(lint::severity_name(f.severity));
    int64_t node = -1;
    auto g = b.graph_by_path.find(f.graph);
    if (g != b.graph_by_path.end() && f.node_index >= 0) {
      int64_t seen = 0;
      for (size_t i = 0; i < b.nodes.size(); ++i)
        if (b.nodes[i]["g"].get<int64_t>() == g->second && seen++ == f.node_index) {
          node = static_cast<int64_t>(i);
          break;
        }
    }
    if (node < 0 && !f.node.empty()) {
      auto it = b.node_by_name.find(f.node);
      if (it != b.node_by_name.end()) node = it->second;
    }
    if (node >= 0)
      b.nodes[static_cast<size_t>(node)]["l"].push_back({sev, f.rule, f.message});
    else
      model_findings.push_back({sev, f.rule, f.graph, f.message});
  }
  data["lint"] = {
      {"counts", {{"error", counts.error}, {"warning", counts.warning}, {"info", counts.info}}},
      {"model_findings", std::move(model_findings)}};
}

Status add_highlight(Builder& b, const HighlightOverlay& h, const std::string& file, json& data) {
  json list = json::array();
  std::set<int64_t> seen;
  for (const auto& name : h.nodes) {
    int64_t n = -1;
    auto it = b.node_by_name.find(name);
    if (it != b.node_by_name.end()) n = it->second;
    // A node_label ("#12 Conv 'c1'", "#12 Conv", "#12"): the 13th main-graph node, when its op
    // type and name agree with what the label gives.
    const auto label = n < 0 ? parse_node_label(name) : std::nullopt;
    if (label && label->index < static_cast<int64_t>(b.nodes.size()) &&
        b.nodes[static_cast<size_t>(label->index)]["g"] == 0) {
      const json& node = b.nodes[static_cast<size_t>(label->index)];
      const std::string op = node.contains("d")
                                 ? node["d"].get<std::string>() + "." + node["o"].get<std::string>()
                                 : node["o"].get<std::string>();
      const bool op_ok = label->op_type.empty() || label->op_type == op;
      const bool name_ok = !label->has_name || label->name == node["n"].get<std::string>();
      if (op_ok && name_ok) n = label->index;
    }
    if (n < 0) return invalid_argument("highlighted node '" + name + "' is not a node of " + file);
    if (!seen.insert(n).second) continue;
    b.nodes[static_cast<size_t>(n)]["h"] = 1;
    list.push_back(n);
  }
  data["highlight"] = {{"title", h.title.empty() ? "highlighted nodes" : h.title},
                       {"summary", h.summary},
                       {"nodes", std::move(list)}};
  return Status::ok();
}

}  // namespace

Expected<json> viewer_data(const LoadedModel& model, const ViewerOverlays& overlays) {
  Builder b;
  auto summary = build_model(b, model);
  if (!summary) return summary.status();

  json data;
  json opsets = json::array();
  for (const auto& [d, v] : summary->opset_imports) opsets.push_back({d, v});
  data["model"] = {
      {"file", summary->file_name},
      {"producer", summary->producer_name +
                       (summary->producer_version.empty() ? "" : " " + summary->producer_version)},
      {"ir_version", summary->ir_version},
      {"opsets", std::move(opsets)},
      {"node_count", summary->node_count},
      {"node_count_with_subgraphs", summary->node_count_with_subgraphs}};
  // The highlight and lint look nodes up by name: before the diff adds the other model's nodes.
  if (overlays.highlight) {
    Status st = add_highlight(b, *overlays.highlight, summary->file_name, data);
    if (!st) return st;
  }
  if (overlays.run_report) add_report(b, *overlays.run_report, data);
  if (overlays.lint) add_lint(b, *overlays.lint, data);
  if (overlays.diff) {
    Status st = add_diff(b, *overlays.diff,
                         overlays.diff_model.empty() ? nullptr : &overlays.diff_model.loaded(),
                         overlays.diff_layout, data);
    if (!st) return st;
  }
  data["graphs"] = std::move(b.graphs);
  data["nodes"] = std::move(b.nodes);
  data["tensors"] = std::move(b.tensors);
  return data;
}

std::string json_string(const json& j, const char* key, const std::string& fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool json_bool(const json& j, const char* key, bool fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::string render_viewer_html(const json& data) {
  // JSON inside <script>: '<', '>' and '&' become \u escapes, so "</script>" in a node name
  // cannot end the block (the JSON stays valid; the page's JSON.parse restores the characters).
  const std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string safe;
  safe.reserve(text.size() + text.size() / 50);
  for (char c : text) {
    switch (c) {
      case '<':
        safe += "\\u003c";
        break;
      case '>':
        safe += "\\u003e";
        break;
      case '&':
        safe += "\\u0026";
        break;
      default:
        safe += c;
    }
  }
  std::string html = viewer_asset("viewer.html");
  auto put = [&](const std::string& marker, const std::string& value) {
    const size_t pos = html.find(marker);
    if (pos != std::string::npos) html.replace(pos, marker.size(), value);
  };
  // Order matters: the data goes last so no marker text inside the data is ever replaced.
  put("/*@CSS@*/", viewer_asset("viewer.css"));
  put("/*@DAGRE@*/", viewer_asset("dagre.min.js"));
  put("/*@JS@*/", viewer_asset("viewer.js"));
  put("@DATA@", safe);
  return html;
}

Status write_viewer_html(const LoadedModel& model, const ViewerOverlays& overlays,
                         const std::string& path) {
  auto data = viewer_data(model, overlays);
  if (!data) return data.status();
  return write_file_atomic(path, render_viewer_html(*data));
}

}  // namespace onnxdbg::report
