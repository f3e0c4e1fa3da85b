// summarize_model: walks the main graph and every subgraph once, counting ops and weights and,
// when asked, recording nodes, attributes and weight statistics. Weight values are read only in
// weights mode, so a basic inspect of a multi-gigabyte model touches no external data.
#include "inspect/inspect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "model/graph.h"
#include "model/shape_inference.h"

namespace onnxdbg {

namespace fs = std::filesystem;

Expected<InspectOptions> inspect_options_from_mode(std::string_view mode) {
  InspectOptions o;
  if (mode == "basic") return o;
  if (mode == "layers") {
    o.layers = true;
    return o;
  }
  if (mode == "attrs") {
    o.layers = o.attributes = true;
    return o;
  }
  if (mode == "weights") {
    o.weights = true;
    return o;
  }
  return invalid_argument("unknown inspect mode '" + std::string(mode) +
                          "' (expected basic, layers, attrs or weights)");
}

namespace {

ValueSummary summarize_value(const onnx::ValueInfoProto& vi) {
  const ValueSignature sig = value_signature(vi);
  ValueSummary v;
  v.name = sig.name;
  v.type = vi.type().has_tensor_type() ? std::string(dtype_name(sig.dtype)) : sig.type_string;
  v.has_shape = sig.has_shape;
  for (size_t i = 0; i < sig.shape.size(); ++i) {
    v.dim_values.push_back(sig.shape[i]);
    if (sig.shape[i] >= 0)
      v.dims.push_back(std::to_string(sig.shape[i]));
    else
      v.dims.push_back(sig.dim_params[i].empty() ? "?" : sig.dim_params[i]);
  }
  return v;
}

std::string proto_dtype_name(int32_t t) {
  auto d = dtype_from_onnx(t);
  return d ? std::string(dtype_name(*d)) : "type" + std::to_string(t);
}

std::string dims_text(const google::protobuf::RepeatedField<int64_t>& dims) {
  std::string s = "[";
  for (int i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims.Get(i));
  return s + "]";
}

// Element bytes of a TensorProto computed from its header, without reading the data.
uint64_t proto_bytes(const onnx::TensorProto& p) {
  if (p.data_type() == static_cast<int32_t>(DType::kString)) {
    uint64_t n = 0;
    for (const auto& s : p.string_data()) n += s.size();
    return n;
  }
  auto d = dtype_from_onnx(p.data_type());
  auto n = shape_numel(Shape(p.dims().begin(), p.dims().end()));
  if (!d || !n) return 0;
  auto bytes = dtype_storage_bytes(*d, *n);  // as stored: int4 and the like are packed
  return bytes ? static_cast<uint64_t>(*bytes) : UINT64_MAX;
}

std::string quote(const std::string& s, size_t max = 40) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\')
      out += '\\', out += static_cast<char>(c);
    else if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  if (s.size() > max) out += "...";
  return out + "\"";
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

// "[1, 2, 3]", or the first 8 values and the count for long lists.
template <class Field, class Fn>
std::string list_text(const Field& field, Fn&& item) {
  constexpr int kMaxShown = 8;
  std::string s = "[";
  for (int i = 0; i < field.size() && i < kMaxShown; ++i) s += (i ? ", " : "") + item(field.Get(i));
  if (field.size() > kMaxShown) s += fmt::format(", ... ({} values)", field.size());
  return s + "]";
}

AttributeSummary summarize_attribute(const onnx::AttributeProto& a) {
  AttributeSummary s;
  s.name = a.name();
  if (!a.ref_attr_name().empty()) {
    s.type = "ref";
    s.value = "@" + a.ref_attr_name();
    return s;
  }
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT:
      s.type = "int";
      s.value = std::to_string(a.i());
      break;
    case A::FLOAT:
      s.type = "float";
      s.value = number(a.f());
      break;
    case A::STRING:
      s.type = "string";
      s.value = quote(a.s());
      break;
    case A::TENSOR:
      s.type = "tensor";
      s.value = proto_dtype_name(a.t().data_type()) + " " + dims_text(a.t().dims());
      break;
    case A::GRAPH:
      s.type = "graph";
      s.value = fmt::format("<subgraph {} nodes>", a.g().node_size());
      break;
    case A::SPARSE_TENSOR:
      s.type = "sparse_tensor";
      s.value = "sparse " + proto_dtype_name(a.sparse_tensor().values().data_type()) + " " +
                dims_text(a.sparse_tensor().dims());
      break;
    case A::TYPE_PROTO: {
      s.type = "type_proto";
      onnx::ValueInfoProto vi;
      *vi.mutable_type() = a.tp();
      s.value = value_signature(vi).type_string;
      break;
    }
    case A::INTS:
      s.type = "ints";
      s.value = list_text(a.ints(), [](int64_t v) { return std::to_string(v); });
      break;
    case A::FLOATS:
      s.type = "floats";
      s.value = list_text(a.floats(), [](float v) { return number(v); });
      break;
    case A::STRINGS:
      s.type = "strings";
      s.value = list_text(a.strings(), [](const std::string& v) { return quote(v, 20); });
      break;
    case A::TENSORS:
      s.type = "tensors";
      s.value = fmt::format("<{} tensors>", a.tensors_size());
      break;
    case A::GRAPHS:
      s.type = "graphs";
      s.value = fmt::format("<{} subgraphs>", a.graphs_size());
      break;
    case A::SPARSE_TENSORS:
      s.type = "sparse_tensors";
      s.value = fmt::format("<{} sparse tensors>", a.sparse_tensors_size());
      break;
    case A::TYPE_PROTOS:
      s.type = "type_protos";
      s.value = fmt::format("<{} types>", a.type_protos_size());
      break;
    default:
      s.type = "undefined";
      s.value = "?";
      break;
  }
  return s;
}

// Statistics over the finite values; NaN and Inf are counted apart.
void compute_stats(const Tensor& t, WeightSummary& w) {
  if (t.dtype() == DType::kString || t.numel() == 0) return;
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  int64_t finite = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.get_as_double(i);
    if (std::isnan(v))
      ++w.nan_count;
    else if (std::isinf(v))
      ++w.inf_count;
    else {
      ++finite;
      sum += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (finite == 0) return;
  const double mean = sum / static_cast<double>(finite);
  double sq = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.get_as_double(i);
    if (std::isfinite(v)) sq += (v - mean) * (v - mean);
  }
  w.has_stats = true;
  w.min = lo;
  w.max = hi;
  w.mean = mean;
  w.std = std::sqrt(sq / static_cast<double>(finite));
}

WeightSummary summarize_weight(const onnx::TensorProto& p, const std::string& name,
                               const std::string& source, const fs::path& base_dir) {
  WeightSummary w;
  w.name = name;
  w.source = source;
  auto d = dtype_from_onnx(p.data_type());
  w.dtype = d ? *d : DType::kUndefined;
  w.shape.assign(p.dims().begin(), p.dims().end());
  w.bytes = proto_bytes(p);
  w.external = p.data_location() == onnx::TensorProto::EXTERNAL;
  auto t = tensor_from_proto(p, base_dir);
  if (!t) {
    w.error = t.status().to_string();
    return w;
  }
  compute_stats(*t, w);
  return w;
}

class Walker {
 public:
  Walker(ModelSummary& s, const fs::path& base_dir) : s_(s), base_dir_(base_dir) {}

  void walk(const onnx::GraphProto& g, GraphSummary& out, bool main) {
    out.name = g.name();
    out.node_count = g.node_size();
    if (!main && s_.options.weights)
      for (const auto& init : g.initializer())
        init_weights_.push_back(summarize_weight(init, init.name(), "initializer", base_dir_));
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      ++s_.node_count_with_subgraphs;
      const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
      ++histogram_[default_domain ? n.op_type() : n.domain() + "." + n.op_type()];
      if (default_domain && n.op_type() == "Constant") note_constant(n);
      NodeSummary ns;
      if (s_.options.layers) {
        ns.index = i;
        ns.name = n.name();
        ns.op_type = n.op_type();
        ns.domain = n.domain();
        ns.inputs.assign(n.input().begin(), n.input().end());
        ns.outputs.assign(n.output().begin(), n.output().end());
      }
      for (const auto& a : n.attribute()) {
        if (s_.options.attributes) ns.attributes.push_back(summarize_attribute(a));
        if (a.type() == onnx::AttributeProto::GRAPH) {
          walk_subgraph(a.name(), a.g(), ns);
        } else if (a.type() == onnx::AttributeProto::GRAPHS) {
          for (int k = 0; k < a.graphs_size(); ++k)
            walk_subgraph(a.name() + "[" + std::to_string(k) + "]", a.graphs(k), ns);
        }
      }
      if (s_.options.layers) out.nodes.push_back(std::move(ns));
    }
  }

  void finish() {
    for (const auto& [op, count] : histogram_) s_.op_histogram.push_back({op, count});
    std::stable_sort(s_.op_histogram.begin(), s_.op_histogram.end(),
                     [](const OpCount& a, const OpCount& b) { return a.count > b.count; });
    s_.weights = std::move(init_weights_);
    for (auto& w : const_weights_) s_.weights.push_back(std::move(w));
  }

  std::vector<WeightSummary> init_weights_, const_weights_;

 private:
  void walk_subgraph(const std::string& attr, const onnx::GraphProto& g, NodeSummary& ns) {
    ++s_.subgraph_count;
    GraphSummary sub;
    walk(g, sub, false);
    if (s_.options.layers) {
      SubgraphSummary ss;
      ss.attribute = attr;
      ss.graph.push_back(std::move(sub));
      ns.subgraphs.push_back(std::move(ss));
    }
  }

  void note_constant(const onnx::NodeProto& n) {
    ++s_.constant_count;
    for (const auto& a : n.attribute()) {
      if (a.name() != "value" || a.type() != onnx::AttributeProto::TENSOR) continue;
      s_.constant_bytes += proto_bytes(a.t());
      if (s_.options.weights) {
        const std::string name = n.output_size() ? n.output(0) : n.name();
        const_weights_.push_back(summarize_weight(a.t(), name, "Constant", base_dir_));
      }
    }
  }

  ModelSummary& s_;
  fs::path base_dir_;
  std::map<std::string, int64_t> histogram_;
};

}  // namespace

namespace {

// Every tensor of the main graph with the type inference gives it (InspectOptions::tensors).
void summarize_tensors(const onnx::ModelProto& m, ModelSummary& s) {
  const InferredTypes inferred = infer_shapes(m, /*strict=*/false);
  s.tensors_error = inferred.error;
  const auto& g = m.graph();
  const auto quantized = quantized_tensors(g);
  std::set<std::string> seen;
  auto add = [&](const std::string& name, const onnx::TypeProto* type, std::string producer) {
    if (name.empty() || !seen.insert(name).second) return;
    onnx::ValueInfoProto vi;
    vi.set_name(name);
    if (type) *vi.mutable_type() = *type;
    TensorSummary t{summarize_value(vi), std::move(producer), std::nullopt};
    if (auto q = quantized.find(name); q != quantized.end()) t.quantization = q->second;
    if (!type || type->value_case() == onnx::TypeProto::VALUE_NOT_SET ||
        (type->has_tensor_type() && type->tensor_type().elem_type() == 0))
      t.value.type = "?";
    s.tensors.push_back(std::move(t));
  };
  auto type_of = [&](const std::string& name) -> const onnx::TypeProto* {
    auto it = inferred.types.find(name);
    return it == inferred.types.end() ? nullptr : &it->second;
  };
  std::set<std::string> inits;
  for (const auto& init : g.initializer()) inits.insert(init.name());
  for (const auto& vi : g.input())
    if (!inits.count(vi.name())) add(vi.name(), &vi.type(), "graph input");
  for (const auto& init : g.initializer()) {
    onnx::TypeProto tp;
    tp.mutable_tensor_type()->set_elem_type(init.data_type());
    tp.mutable_tensor_type()->mutable_shape();  // no dims: a scalar, not an unknown shape
    for (int64_t d : init.dims())
      tp.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    add(init.name(), &tp, "initializer");
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    for (const auto& out : n.output()) {
      const onnx::TypeProto* t = type_of(out);
      if (!t)  // a graph output inference left alone keeps its declared type
        for (const auto& vi : g.output())
          if (vi.name() == out && vi.has_type()) t = &vi.type();
      add(out, t, node_label(n, i));
    }
  }
}

}  // namespace

Expected<ModelSummary> summarize_model(const LoadedModel& model, InspectOptions options) {
  const auto& m = model.proto;
  if (!m.has_graph()) return model_error("the model has no graph");
  if (options.attributes) options.layers = true;
  ModelSummary s;
  s.options = options;
  s.path = model.path.string();
  s.file_name = model.path.filename().string();
  std::error_code ec;
  if (!model.path.empty()) {
    const auto size = fs::file_size(model.path, ec);
    if (!ec) s.file_size = size;
  }
  s.ir_version = m.ir_version();
  s.producer_name = m.producer_name();
  s.producer_version = m.producer_version();
  s.domain = m.domain();
  s.doc_string = m.doc_string();
  s.model_version = m.model_version();
  for (const auto& op : m.opset_import())
    s.opset_imports.emplace_back(op.domain().empty() ? "ai.onnx" : op.domain(), op.version());
  s.warnings = model.warnings;

  const auto& g = m.graph();
  std::map<std::string, bool> is_init;
  for (const auto& init : g.initializer()) is_init[init.name()] = true;
  for (const auto& vi : g.input())
    if (!is_init.count(vi.name())) s.inputs.push_back(summarize_value(vi));
  for (const auto& vi : g.output()) s.outputs.push_back(summarize_value(vi));

  Walker walker(s, model.base_dir);
  s.initializer_count = g.initializer_size();
  for (const auto& init : g.initializer()) {
    s.initializer_bytes += proto_bytes(init);
    if (init.data_location() == onnx::TensorProto::EXTERNAL) ++s.external_initializer_count;
    if (options.weights)
      walker.init_weights_.push_back(
          summarize_weight(init, init.name(), "initializer", model.base_dir));
  }
  if (options.weights)
    if (Status st = reject_sparse_initializers(m, "inspect --mode weights"); !st)
      s.warnings.push_back(st.message() + "; the tables leave it out");
  s.node_count = g.node_size();
  walker.walk(g, s.graph, true);
  walker.finish();
  if (options.tensors) summarize_tensors(m, s);
  return s;
}

}  // namespace onnxdbg
