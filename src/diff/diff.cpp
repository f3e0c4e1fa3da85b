// Model diff: node matching (name, then op type in order), per-node and graph-level changes, and
// the summary sentence.
#include "diff/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>

#include "google/protobuf/util/message_differencer.h"
#include "model/graph.h"

namespace onnxdbg {

namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string attr_value(const onnx::AttributeProto& a) {
  auto list = [](const auto& xs) {
    std::string s = "[";
    int k = 0;
    for (const auto& x : xs) {
      if (k++) s += ", ";
      if (k > 8) {
        s += "...";
        break;
      }
      if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>)
        s += x;
      else
        s += fmt(static_cast<double>(x));
    }
    return s + "]";
  };
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      return std::to_string(a.i());
    case onnx::AttributeProto::FLOAT:
      return fmt(a.f());
    case onnx::AttributeProto::STRING:
      return "'" + a.s() + "'";
    case onnx::AttributeProto::INTS:
      return list(a.ints());
    case onnx::AttributeProto::FLOATS:
      return list(a.floats());
    case onnx::AttributeProto::STRINGS:
      return list(a.strings());
    case onnx::AttributeProto::TENSOR:
      return "tensor";
    case onnx::AttributeProto::GRAPH:
      return "graph (" + std::to_string(a.g().node_size()) + " nodes)";
    default:
      return "(value)";
  }
}

bool same_message(const google::protobuf::Message& x, const google::protobuf::Message& y) {
  return google::protobuf::util::MessageDifferencer::Equals(x, y);
}

using Producers = std::unordered_map<std::string, int>;  // model/graph.h's producers

std::string type_string(const onnx::ValueInfoProto& vi) {
  const auto s = value_signature(vi);
  std::string out = s.type_string;
  if (s.has_shape) {
    out += " [";
    for (size_t d = 0; d < s.shape.size(); ++d) {
      if (d) out += ", ";
      out += s.shape[d] >= 0 ? std::to_string(s.shape[d])
                             : (s.dim_params[d].empty() ? "?" : s.dim_params[d]);
    }
    out += "]";
  }
  return out;
}

// "kind 'name'" then `suffix`: how the diff names an input, output or initializer.
std::string item_name(std::string_view kind, const std::string& name,
                      std::string_view suffix = {}) {
  std::string s(kind);
  s += " '";
  s += name;
  s += '\'';
  s += suffix;
  return s;
}

void diff_value_infos(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& a,
                      const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& b,
                      const std::set<std::string>& skip, const std::string& kind,
                      std::vector<DiffChange>& out) {
  std::map<std::string, const onnx::ValueInfoProto*> ma, mb;
  for (const auto& v : a)
    if (!skip.count(v.name())) ma[v.name()] = &v;
  for (const auto& v : b)
    if (!skip.count(v.name())) mb[v.name()] = &v;
  for (const auto& [name, v] : ma) {
    auto it = mb.find(name);
    if (it == mb.end())
      out.push_back({item_name(kind, name), "only in A (" + type_string(*v) + ")"});
    else if (type_string(*v) != type_string(*it->second))
      out.push_back({item_name(kind, name), type_string(*v) + " -> " + type_string(*it->second)});
  }
  for (const auto& [name, v] : mb)
    if (!ma.count(name))
      out.push_back({item_name(kind, name), "only in B (" + type_string(*v) + ")"});
}

// Nodes of two graphs paired: by unique non-empty name first, then the rest by op type in graph
// order (the k-th unmatched Conv of A with the k-th unmatched Conv of B).
struct Matching {
  std::vector<int> a_to_b, b_to_a;
  int by_name = 0, by_position = 0;
};

Matching match_nodes(const onnx::GraphProto& ga, const onnx::GraphProto& gb) {
  Matching m;
  std::map<std::string, int> name_a, name_b;
  std::set<std::string> dup;
  for (int i = 0; i < ga.node_size(); ++i)
    if (!ga.node(i).name().empty() && !name_a.emplace(ga.node(i).name(), i).second)
      dup.insert(ga.node(i).name());
  for (int i = 0; i < gb.node_size(); ++i)
    if (!gb.node(i).name().empty() && !name_b.emplace(gb.node(i).name(), i).second)
      dup.insert(gb.node(i).name());
  m.a_to_b.assign(static_cast<size_t>(ga.node_size()), -1);
  m.b_to_a.assign(static_cast<size_t>(gb.node_size()), -1);
  for (const auto& [name, i] : name_a) {
    if (dup.count(name)) continue;
    auto it = name_b.find(name);
    if (it == name_b.end()) continue;
    m.a_to_b[static_cast<size_t>(i)] = it->second;
    m.b_to_a[static_cast<size_t>(it->second)] = i;
    ++m.by_name;
  }
  std::map<std::string, std::vector<int>> rest_a, rest_b;
  for (int i = 0; i < ga.node_size(); ++i)
    if (m.a_to_b[static_cast<size_t>(i)] < 0) rest_a[ga.node(i).op_type()].push_back(i);
  for (int i = 0; i < gb.node_size(); ++i)
    if (m.b_to_a[static_cast<size_t>(i)] < 0) rest_b[gb.node(i).op_type()].push_back(i);
  for (auto& [op, as] : rest_a) {
    auto it = rest_b.find(op);
    if (it == rest_b.end()) continue;
    const size_t n = std::min(as.size(), it->second.size());
    for (size_t k = 0; k < n; ++k) {
      m.a_to_b[static_cast<size_t>(as[k])] = it->second[k];
      m.b_to_a[static_cast<size_t>(it->second[k])] = as[k];
      ++m.by_position;
    }
  }
  return m;
}

std::string tensor_desc(const onnx::TensorProto& t) {
  Shape s(t.dims().begin(), t.dims().end());
  return std::string(dtype_name(static_cast<DType>(t.data_type()))) + "[" + shape_to_string(s) +
         "]";
}

// Two graphs of A and B compared at one place of the models: the main graphs (path "main") or
// the subgraphs of a matched node ("main/If_0:then_branch"), every change going to `out`.
class GraphDiffer {
 public:
  GraphDiffer(const LoadedModel& a, const LoadedModel& b, std::string a_name, std::string b_name)
      : a_(a), b_(b), a_name_(std::move(a_name)), b_name_(std::move(b_name)) {}

  // "" when the tensors hold the same values, else what differs: their dtype and shape, or how
  // many values differ and by how much at most. Errors: a tensor that cannot be read.
  Expected<std::string> tensor_difference(const onnx::TensorProto& ta, const onnx::TensorProto& tb,
                                          const std::string& item) const {
    if (tensor_desc(ta) != tensor_desc(tb)) return tensor_desc(ta) + " -> " + tensor_desc(tb);
    auto va = tensor_from_proto(ta, a_.base_dir);
    if (!va) return std::move(va).status().with_context("while reading " + item + " of " + a_name_);
    auto vb = tensor_from_proto(tb, b_.base_dir);
    if (!vb) return std::move(vb).status().with_context("while reading " + item + " of " + b_name_);
    if (va->dtype() == DType::kString)
      return va->strings() == vb->strings() ? std::string() : std::string("string values differ");
    double max_abs = 0;
    int64_t differ = 0;
    for (int64_t k = 0; k < va->numel(); ++k) {
      const double x = va->get_as_double(k), y = vb->get_as_double(k);
      if (x == y || (std::isnan(x) && std::isnan(y))) continue;
      ++differ;
      max_abs = std::max(max_abs, std::abs(x - y));
    }
    if (differ == 0) return std::string();
    return std::to_string(differ) + " of " + std::to_string(va->numel()) +
           " values differ (max abs difference " + fmt(max_abs) + ")";
  }

  // The changes on matched nodes of ga and gb (paired by m). `prefix` goes before each node's
  // label ("" on the main graph, "main/If_0:then_branch/" in a subgraph); `owner` is the
  // main-graph node every change is recorded on (-1: each main-graph node itself).
  Status diff_nodes(const onnx::GraphProto& ga, const onnx::GraphProto& gb, const Matching& m,
                    const std::string& prefix, const std::string& path, int64_t owner,
                    std::vector<DiffChange>& out) const {
    const Producers pa = producers(ga), pb = producers(gb);
    for (int i = 0; i < ga.node_size(); ++i) {
      const int j = m.a_to_b[static_cast<size_t>(i)];
      if (j < 0) continue;
      const auto& na = ga.node(i);
      const auto& nb = gb.node(j);
      const std::string label = prefix + node_label(na, i);
      const int64_t at = owner >= 0 ? owner : i;
      if (na.op_type() != nb.op_type() || na.domain() != nb.domain())
        out.push_back(
            {label, "op type " + qualified_op_type(na) + " -> " + qualified_op_type(nb), at});
      if (na.name() != nb.name() && !na.name().empty())
        out.push_back({label, "renamed to '" + nb.name() + "'", at});
      ODB_RETURN_IF_ERROR(diff_attributes(na, nb, i, label, path, at, out));
      if (na.input_size() != nb.input_size())
        out.push_back(
            {label,
             std::to_string(na.input_size()) + " inputs -> " + std::to_string(nb.input_size()),
             at});
      for (int k = 0; k < std::min(na.input_size(), nb.input_size()); ++k) {
        // Compare where each input comes from, translated through the node matching, so renamed
        // intermediate tensors do not count as rewiring.
        const std::string sa = source(ga, pa, na.input(k), &m.a_to_b);
        const std::string sb = source(gb, pb, nb.input(k), nullptr);
        if (sa != sb)
          out.push_back(
              {label,
               "input " + std::to_string(k) + " '" + na.input(k) + "' -> '" + nb.input(k) + "'",
               at});
      }
    }
    return Status::ok();
  }

  // Initializers of ga and gb by name: only on one side, another dtype or shape, other values.
  // `where` follows each item's name (" in main/If_0:then_branch"; "" on the main graph).
  Status diff_initializers(const onnx::GraphProto& ga, const onnx::GraphProto& gb,
                           const std::string& where, int64_t owner,
                           std::vector<DiffChange>& out) const {
    std::map<std::string, const onnx::TensorProto*> ia, ib;
    for (const auto& t : ga.initializer()) ia[t.name()] = &t;
    for (const auto& t : gb.initializer()) ib[t.name()] = &t;
    for (const auto& [name, ta] : ia) {
      const std::string item = item_name("initializer", name, where);
      auto it = ib.find(name);
      if (it == ib.end()) {
        out.push_back({item, "only in A (" + tensor_desc(*ta) + ")", owner});
        continue;
      }
      ODB_ASSIGN_OR_RETURN(std::string what, tensor_difference(*ta, *it->second, item));
      if (!what.empty()) out.push_back({item, what, owner});
    }
    for (const auto& [name, tb] : ib)
      if (!ia.count(name))
        out.push_back(
            {item_name("initializer", name, where), "only in B (" + tensor_desc(*tb) + ")", owner});
    return Status::ok();
  }

 private:
  // Where a value comes from: "output k of node i" (i translated through `map`, A's nodes to
  // B's), else the value's own name.
  static std::string source(const onnx::GraphProto& g, const Producers& p, const std::string& name,
                            const std::vector<int>* map) {
    if (name.empty()) return "(none)";
    auto it = p.find(name);
    if (it == p.end()) return "value '" + name + "'";
    const auto& outs = g.node(it->second).output();
    const auto k = std::find(outs.begin(), outs.end(), name) - outs.begin();
    const int node = map ? (*map)[static_cast<size_t>(it->second)] : it->second;
    return "output " + std::to_string(k) + " of node " + std::to_string(node);
  }

  // Attributes of a matched node pair: added, removed, changed. A tensor attribute (Constant's
  // value) that changed says how its values differ; a subgraph that changed is compared node by
  // node (diff_subgraph) instead of being called different as a whole.
  Status diff_attributes(const onnx::NodeProto& na, const onnx::NodeProto& nb, int index,
                         const std::string& label, const std::string& path, int64_t at,
                         std::vector<DiffChange>& out) const {
    std::map<std::string, const onnx::AttributeProto*> aa, ab;
    for (const auto& x : na.attribute()) aa[x.name()] = &x;
    for (const auto& x : nb.attribute()) ab[x.name()] = &x;
    for (const auto& [name, x] : aa) {
      auto it = ab.find(name);
      if (it == ab.end()) {
        out.push_back({label, "attribute " + name + " removed (was " + attr_value(*x) + ")", at});
        continue;
      }
      const onnx::AttributeProto& y = *it->second;
      if (same_message(*x, y)) continue;
      if (x->type() == y.type() && x->type() == onnx::AttributeProto::TENSOR) {
        ODB_ASSIGN_OR_RETURN(
            std::string what,
            tensor_difference(x->t(), y.t(), item_name("attribute", name, " of " + label)));
        out.push_back(
            {label, "attribute " + name + ": " + (what.empty() ? "encoding differs" : what), at});
      } else if (x->type() == y.type() && (x->type() == onnx::AttributeProto::GRAPH ||
                                           (x->type() == onnx::AttributeProto::GRAPHS &&
                                            x->graphs_size() == y.graphs_size()))) {
        const size_t before = out.size();
        if (x->type() == onnx::AttributeProto::GRAPH) {
          ODB_RETURN_IF_ERROR(
              diff_subgraph(x->g(), y.g(), subgraph_path(path, na, index, name), at, out));
        } else {
          for (int g = 0; g < x->graphs_size(); ++g)
            ODB_RETURN_IF_ERROR(diff_subgraph(
                x->graphs(g), y.graphs(g),
                subgraph_path(path, na, index, name + "[" + std::to_string(g) + "]"), at, out));
        }
        if (out.size() == before)  // names or doc strings alone
          out.push_back({label, "attribute " + name + ": the subgraphs differ only in names", at});
      } else {
        out.push_back(
            {label, "attribute " + name + " " + attr_value(*x) + " -> " + attr_value(y), at});
      }
    }
    for (const auto& [name, x] : ab)
      if (!aa.count(name))
        out.push_back({label, "attribute " + name + " added (" + attr_value(*x) + ")", at});
    return Status::ok();
  }

  // A subgraph of A's node against the same attribute's subgraph of its match in B, as the main
  // graphs are compared: nodes matched, nodes only on one side, changed nodes (recursing into
  // their own subgraphs), initializers, inputs and outputs. Items are named by `path`.
  Status diff_subgraph(const onnx::GraphProto& sa, const onnx::GraphProto& sb,
                       const std::string& path, int64_t owner, std::vector<DiffChange>& out) const {
    const size_t first = out.size();
    const Matching m = match_nodes(sa, sb);
    const std::string prefix = path + "/";
    for (int i = 0; i < sa.node_size(); ++i)
      if (m.a_to_b[static_cast<size_t>(i)] < 0)
        out.push_back({prefix + node_label(sa.node(i), i), "only in A", owner});
    for (int j = 0; j < sb.node_size(); ++j)
      if (m.b_to_a[static_cast<size_t>(j)] < 0)
        out.push_back({prefix + node_label(sb.node(j), j), "only in B", owner});
    ODB_RETURN_IF_ERROR(diff_nodes(sa, sb, m, prefix, path, owner, out));
    ODB_RETURN_IF_ERROR(diff_initializers(sa, sb, " in " + path, owner, out));
    std::vector<DiffChange> io;
    std::set<std::string> inits;
    for (const auto& t : sa.initializer()) inits.insert(t.name());
    for (const auto& t : sb.initializer()) inits.insert(t.name());
    diff_value_infos(sa.input(), sb.input(), inits, path + " input", io);
    diff_value_infos(sa.output(), sb.output(), {}, path + " output", io);
    for (auto& c : io) {
      c.node = owner;
      out.push_back(std::move(c));
    }
    // This graph's own changes (nested subgraphs' were named when they returned).
    for (size_t k = first; k < out.size(); ++k)
      if (out[k].graph == "main") out[k].graph = path;
    return Status::ok();
  }

  const LoadedModel& a_;
  const LoadedModel& b_;
  std::string a_name_, b_name_;
};

}  // namespace

namespace {

// IR version and opset imports that differ, as graph-level changes.
void diff_versions(const onnx::ModelProto& a, const onnx::ModelProto& b,
                   std::vector<DiffChange>& out) {
  if (a.ir_version() != b.ir_version())
    out.push_back(
        {"IR version", std::to_string(a.ir_version()) + " -> " + std::to_string(b.ir_version())});
  std::map<std::string, int64_t> oa, ob;
  for (const auto& o : a.opset_import())
    oa[o.domain().empty() ? "ai.onnx" : o.domain()] = o.version();
  for (const auto& o : b.opset_import())
    ob[o.domain().empty() ? "ai.onnx" : o.domain()] = o.version();
  for (const auto& [dom, v] : oa) {
    auto it = ob.find(dom);
    if (it == ob.end())
      out.push_back({"opset " + dom, std::to_string(v) + " -> not imported"});
    else if (it->second != v)
      out.push_back({"opset " + dom, std::to_string(v) + " -> " + std::to_string(it->second)});
  }
  for (const auto& [dom, v] : ob)
    if (!oa.count(dom)) out.push_back({"opset " + dom, "not imported -> " + std::to_string(v)});
}

// The last matched node (in graph order) whose outputs feed a node missing from the other side,
// as a label; "" if none.
std::string downstream_of(const onnx::GraphProto& g, const std::vector<int>& map) {
  const Producers p = producers(g);
  int best = -1;
  for (int i = 0; i < g.node_size(); ++i) {
    if (map[static_cast<size_t>(i)] >= 0) continue;
    for (const auto& in : g.node(i).input()) {
      auto it = p.find(in);
      if (it != p.end() && map[static_cast<size_t>(it->second)] >= 0)
        best = std::max(best, it->second);
    }
  }
  return best < 0 ? std::string() : node_label(g.node(best), best);
}

// The summary line: what B lacks or adds, where, outputs left without a producer, changed
// nodes and graph-level differences.
std::string summary_of(const ModelDiff& d, const onnx::GraphProto& ga, const onnx::GraphProto& gb) {
  std::vector<std::string> parts;
  if (!d.only_in_a.empty()) {
    const std::string where = downstream_of(ga, d.a_to_b);
    parts.push_back(d.b_name + " lacks " + std::to_string(d.only_in_a.size()) + " node" +
                    (d.only_in_a.size() == 1 ? "" : "s") + " of " + d.a_name +
                    (where.empty() ? "" : " downstream of " + where));
  }
  if (!d.only_in_b.empty()) {
    const std::string where = downstream_of(gb, d.b_to_a);
    parts.push_back(d.b_name + " adds " + std::to_string(d.only_in_b.size()) + " node" +
                    (d.only_in_b.size() == 1 ? "" : "s") +
                    (where.empty() ? "" : " downstream of " + where));
  }
  const NameSet defined = defined_names(gb);
  for (const auto& o : gb.output())
    if (!defined.count(o.name()))
      parts.push_back("its output '" + o.name() + "' is produced by no node");
  if (!d.changed.empty()) {
    std::set<int64_t> nodes;
    size_t inside = 0;  // changes inside subgraphs
    for (const auto& c : d.changed) {
      nodes.insert(c.node);
      inside += c.graph != "main";
    }
    parts.push_back(std::to_string(nodes.size()) + " matched node" +
                    (nodes.size() == 1 ? "" : "s") + " changed" +
                    (inside == 0 ? ""
                                 : " (" + std::to_string(inside) + " change" +
                                       (inside == 1 ? "" : "s") + " inside subgraphs)"));
  }
  if (!d.graph_changes.empty())
    parts.push_back(std::to_string(d.graph_changes.size()) + " graph-level difference" +
                    (d.graph_changes.size() == 1 ? "" : "s"));
  if (parts.empty())
    return d.a_name + " and " + d.b_name + " have the same graph (" +
           std::to_string(ga.node_size()) + " nodes)";
  std::string summary = parts[0];
  for (size_t k = 1; k < parts.size(); ++k) summary += "; " + parts[k];
  return summary;
}

}  // namespace

Expected<ModelDiff> diff_models(const LoadedModel& la, const LoadedModel& lb) {
  const auto& ga = la.proto.graph();
  const auto& gb = lb.proto.graph();
  ModelDiff d;
  d.a_name = la.path.empty() ? "A" : la.path.filename().string();
  d.b_name = lb.path.empty() ? "B" : lb.path.filename().string();
  const GraphDiffer differ(la, lb, d.a_name, d.b_name);

  // 1-2. Match the main graphs' nodes.
  const Matching m = match_nodes(ga, gb);
  d.matched_by_name = m.by_name;
  d.matched_by_position = m.by_position;
  d.a_to_b = m.a_to_b;
  d.b_to_a = m.b_to_a;
  for (int i = 0; i < ga.node_size(); ++i)
    if (d.a_to_b[static_cast<size_t>(i)] < 0) d.only_in_a.push_back(node_label(ga.node(i), i));
  for (int i = 0; i < gb.node_size(); ++i)
    if (d.b_to_a[static_cast<size_t>(i)] < 0) d.only_in_b.push_back(node_label(gb.node(i), i));

  // 3. Changes on matched nodes, inside their subgraphs too.
  ODB_RETURN_IF_ERROR(differ.diff_nodes(ga, gb, m, "", "main", -1, d.changed));

  // 4. Graph level: opsets, IR, inputs, outputs, initializers.
  diff_versions(la.proto, lb.proto, d.graph_changes);
  std::set<std::string> inits;
  for (const auto& t : ga.initializer()) inits.insert(t.name());
  for (const auto& t : gb.initializer()) inits.insert(t.name());
  diff_value_infos(ga.input(), gb.input(), inits, "input", d.graph_changes);
  diff_value_infos(ga.output(), gb.output(), {}, "output", d.graph_changes);
  ODB_RETURN_IF_ERROR(differ.diff_initializers(ga, gb, "", -1, d.graph_changes));

  // 5. Summary.
  d.summary = summary_of(d, ga, gb);
  return d;
}

}  // namespace onnxdbg
