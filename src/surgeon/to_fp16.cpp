// `surgeon to-fp16`: float32 weights and activations to float16. Each node's inputs get the type
// it accepts (its schema, or float32 for blocked ops), with one Cast per (tensor, type) inserted
// where the producer's type differs; graph inputs/outputs optionally stay float32. If branches and
// Loop/Scan bodies are converted with their nodes (Converter::convert_graph per graph).
#include <algorithm>
#include <cmath>

#include "core/onnx.h"
#include "model/graph.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "onnx/defs/schema.h"
#include "surgeon/inline_util.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {

namespace {

constexpr int32_t kF32 = onnx::TensorProto::FLOAT;
constexpr int32_t kF16 = onnx::TensorProto::FLOAT16;

// Does formal parameter `k` of `params` (the last one may be variadic) accept tensor(float16)?
bool accepts_fp16(const std::vector<onnx::OpSchema::FormalParameter>& params, int k) {
  if (params.empty()) return false;
  const auto& p = params[std::min<size_t>(static_cast<size_t>(k), params.size() - 1)];
  if (static_cast<size_t>(k) >= params.size() &&
      p.GetOption() != onnx::OpSchema::FormalParameterOption::Variadic)
    return false;
  for (const auto* t : p.GetTypes())
    if (*t == "tensor(float16)") return true;
  return false;
}

// float32 -> float16 with values beyond float16's range clamped to +-65504 (inf and NaN kept).
Expected<Tensor> to_half(const Tensor& t) {
  Tensor c = t;
  float* v = c.data<float>();
  for (int64_t i = 0; i < c.numel(); ++i)
    if (std::isfinite(v[i])) v[i] = std::clamp(v[i], -65504.0f, 65504.0f);
  return cast_tensor(c, DType::kFloat16);
}

Status tensor_proto_to_half(onnx::TensorProto& tp, const std::filesystem::path& base_dir) {
  ODB_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(tp, base_dir));
  ODB_ASSIGN_OR_RETURN(Tensor h, to_half(t));
  onnx::TensorProto out = tensor_to_proto(h, tp.name());
  out.set_doc_string(tp.doc_string());
  tp = std::move(out);
  return Status::ok();
}

void rename_reads(onnx::GraphProto& g, const std::string& from, const std::string& to) {
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input())
      if (in == from) in = to;
    for_each_subgraph_mut(
        n, [&](onnx::GraphProto& sg, const std::string&) { rename_reads(sg, from, to); });
  }
  for (auto& o : *g.mutable_output())
    if (o.name() == from) o.set_name(to);
}

// Attributes that decide an output's float type: Cast's `to`, `dtype` of the generators,
// Constant and ConstantOfShape values.
Status convert_attributes(onnx::NodeProto& n, const std::filesystem::path& base_dir,
                          int64_t& constants) {
  const std::string& op = n.op_type();
  bool has_value = false;
  for (auto& a : *n.mutable_attribute()) {
    if ((op == "Cast" && a.name() == "to") || a.name() == "dtype") {
      if (a.i() == kF32) a.set_i(kF16);
    } else if ((op == "Constant" || op == "ConstantOfShape") && a.name() == "value") {
      has_value = true;
      if (a.t().data_type() == kF32) {
        ODB_RETURN_IF_ERROR(tensor_proto_to_half(*a.mutable_t(), base_dir));
        constants += op == "Constant";
      }
    } else if (op == "Constant" && (a.name() == "value_float" || a.name() == "value_floats")) {
      const bool scalar = a.name() == "value_float";
      std::vector<float> v = scalar ? std::vector<float>{a.f()}
                                    : std::vector<float>(a.floats().begin(), a.floats().end());
      Tensor t = scalar ? Tensor::scalar<float>(v[0])
                        : Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
      ODB_ASSIGN_OR_RETURN(Tensor h, to_half(t));
      a.Clear();
      ++constants;
      a.set_name("value");
      a.set_type(onnx::AttributeProto::TENSOR);
      *a.mutable_t() = tensor_to_proto(h);
    }
  }
  if (op == "ConstantOfShape" && !has_value) {  // the default value is float32 zero
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = tensor_to_proto(Tensor::from_vector<Float16>({1}, {Float16(0.0f)}));
  }
  return Status::ok();
}

// If, Loop and Scan of the default domain: converted with their bodies.
bool is_control_flow(const onnx::NodeProto& n) {
  using inline_detail::is_op;
  return is_op(n, "If") || is_op(n, "Loop") || is_op(n, "Scan");
}

// The node output that body output `k` gives: Loop's body gives its condition first; If's
// branches and Scan's body give the node's outputs in order. -1 when none.
int node_output_of(const onnx::NodeProto& n, int k) {
  const int j = n.op_type() == "Loop" ? k - 1 : k;
  return j >= 0 && j < n.output_size() ? j : -1;
}

using Types = std::unordered_map<std::string, int32_t>;

// The conversion of one model: element types before conversion for every graph (`orig_`), the
// names in use anywhere (for fresh ones), and convert_graph applied to the main graph and, for
// If/Loop/Scan, to each body with the outer types as they are at the node.
class Converter {
 public:
  Converter(onnx::ModelProto& model, const std::filesystem::path& base_dir,
            const Fp16Options& options, Fp16Stats& stats)
      : base_dir_(base_dir),
        options_(options),
        stats_(stats),
        blocked_ops_(options.block_list.begin(), options.block_list.end()) {
    for (const auto& o : model.opset_import()) opsets_[canonical_domain(o.domain())] = o.version();
    read_types(model);
  }

  // Converts `g` given the types `cur` of the values around it (empty for the main graph).
  // A body's float32 inputs become float16, and its outputs marked in `half_outputs` are made
  // float16 (a Cast added where the value is not).
  Status convert_graph(onnx::GraphProto& g, Types cur, bool main,
                       const std::vector<bool>& half_outputs = {});

 private:
  void read_types(const onnx::ModelProto& model);
  int32_t orig_of(const std::string& n) const {
    auto it = orig_.find(n);
    return it == orig_.end() ? 0 : it->second;
  }
  const onnx::OpSchema* schema_of(const onnx::NodeProto& n) const {
    const std::string d = canonical_domain(n.domain());
    auto it = opsets_.find(d);
    if (it == opsets_.end()) return nullptr;
    return onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(it->second), d);
  }
  bool is_blocked(const onnx::NodeProto& n) const {
    if (blocked_ops_.count(n.op_type())) return true;
    return !is_control_flow(n) && (!schema_of(n) || has_subgraph(n));
  }
  // Whether unblocked node `n` takes input `k` as float16 (every float input of If/Loop/Scan).
  bool takes_half(const onnx::NodeProto& n, int k) const {
    return is_control_flow(n) || accepts_fp16(schema_of(n)->inputs(), k);
  }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; taken_.count(name); ++i) name = base + "_" + std::to_string(i);
    taken_.insert(name);
    return name;
  }
  std::vector<bool> half_outputs_of(const onnx::NodeProto& node) const;
  Status convert_initializers(onnx::GraphProto& g, bool main, Types& cur);
  Status finish_main_outputs(onnx::GraphProto& g, Types& cur);

  const std::filesystem::path& base_dir_;
  const Fp16Options& options_;
  Fp16Stats& stats_;
  std::unordered_set<std::string> blocked_ops_;
  std::unordered_map<std::string, int64_t> opsets_;
  Types orig_;  // element type before conversion, every graph
  NameSet taken_;
};

void Converter::read_types(const onnx::ModelProto& model) {
  const InferredTypes inferred = infer_shapes(model);
  for (const auto* types : {&inferred.types, &inferred.subgraph_types})
    for (const auto& [name, t] : *types)
      if (t.has_tensor_type()) orig_[name] = t.tensor_type().elem_type();
  walk_graphs(model.graph(), [&](const GraphVisit& v) {
    const auto& g = *v.graph;
    for (const auto& vi : g.value_info())
      if (vi.type().has_tensor_type())
        orig_.emplace(vi.name(), vi.type().tensor_type().elem_type());
    for (const auto& vi : g.input())
      if (vi.type().has_tensor_type()) orig_[vi.name()] = vi.type().tensor_type().elem_type();
    for (const auto& vi : g.output())
      if (vi.type().has_tensor_type())
        orig_.emplace(vi.name(), vi.type().tensor_type().elem_type());
    for (const auto& t : g.initializer()) orig_[t.name()] = t.data_type();
    for (const auto& n : g.node()) {
      taken_.insert(n.name());
      for (const auto& o : n.output()) taken_.insert(o);
    }
  });
  for (const auto& [n, t] : orig_) taken_.insert(n);
}

// Which outputs of unblocked control-flow `node` become float16: those that were float32, by the
// node's own output type or, where that is unknown, by a body's output type.
std::vector<bool> Converter::half_outputs_of(const onnx::NodeProto& node) const {
  std::vector<bool> half(static_cast<size_t>(node.output_size()));
  for (int j = 0; j < node.output_size(); ++j) half[j] = orig_of(node.output(j)) == kF32;
  for_each_subgraph(node, [&](const onnx::GraphProto& body, const std::string&) {
    for (int k = 0; k < body.output_size(); ++k) {
      const int j = node_output_of(node, k);
      if (j >= 0 && orig_of(node.output(j)) == 0 && orig_of(body.output(k).name()) == kF32)
        half[j] = true;
    }
  });
  return half;
}

// Converts the float32 initializers of `g` that a node of `g` takes as float16 (or, in the main
// graph without keep_io_types, that are graph outputs), and the graph's float32 inputs: those of
// a body always, the main graph's unless keep_io_types.
Status Converter::convert_initializers(onnx::GraphProto& g, bool main, Types& cur) {
  const NameSet inits = initializer_names(g);
  NameSet half_inits;
  for (const auto& n : g.node()) {
    if (is_blocked(n)) continue;
    for (int k = 0; k < n.input_size(); ++k)
      if (inits.count(n.input(k)) && orig_of(n.input(k)) == kF32 && takes_half(n, k))
        half_inits.insert(n.input(k));
  }
  if (main && !options_.keep_io_types)
    for (const auto& o : g.output())
      if (inits.count(o.name()) && orig_of(o.name()) == kF32) half_inits.insert(o.name());
  for (auto& t : *g.mutable_initializer())
    if (half_inits.count(t.name())) {
      ODB_RETURN_IF_ERROR(tensor_proto_to_half(t, base_dir_));
      cur[t.name()] = kF16;
      ++stats_.initializers_converted;
    }
  for (auto& vi : *g.mutable_input())
    if ((!main || !options_.keep_io_types) && !inits.count(vi.name()) &&
        orig_of(vi.name()) == kF32) {
      vi.mutable_type()->mutable_tensor_type()->set_elem_type(kF16);
      cur[vi.name()] = kF16;
    }
  return Status::ok();
}

Status Converter::convert_graph(onnx::GraphProto& g, Types cur, bool main,
                                const std::vector<bool>& half_outputs) {
  for (const auto& vi : g.input()) cur[vi.name()] = orig_of(vi.name());
  for (const auto& t : g.initializer()) cur[t.name()] = orig_of(t.name());
  ODB_RETURN_IF_ERROR(convert_initializers(g, main, cur));

  std::map<std::pair<std::string, int32_t>, std::string> casts;  // casts made in this graph
  google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
  auto cast_of = [&](const std::string& x, int32_t to) {
    auto key = std::make_pair(x, to);
    if (auto it = casts.find(key); it != casts.end()) return it->second;
    std::string y = fresh(x + (to == kF16 ? "_fp16" : "_fp32"));
    make_cast_node(*out.Add(), fresh(y + "_cast"), x, y, to);
    cur[y] = to;
    casts[key] = y;
    ++stats_.casts_inserted;
    return y;
  };

  for (auto& node : *g.mutable_node()) {
    const bool blocked = is_blocked(node);
    const auto* s = blocked || is_control_flow(node) ? nullptr : schema_of(node);
    stats_.blocked_nodes += blocked;
    for (int k = 0; k < node.input_size(); ++k) {
      const std::string x = node.input(k);
      if (x.empty() || orig_of(x) != kF32) continue;
      const int32_t want = !blocked && takes_half(node, k) ? kF16 : kF32;
      if (cur[x] != want) node.set_input(k, cast_of(x, want));
    }
    std::vector<bool> half(static_cast<size_t>(node.output_size()));
    if (!blocked && is_control_flow(node)) {
      half = half_outputs_of(node);
      Status st = Status::ok();
      for_each_subgraph_mut(node, [&](onnx::GraphProto& body, const std::string&) {
        std::vector<bool> body_half(static_cast<size_t>(body.output_size()));
        for (int k = 0; k < body.output_size(); ++k)
          if (int j = node_output_of(node, k); j >= 0) body_half[k] = half[j];
        if (st.is_ok()) st = convert_graph(body, cur, /*main=*/false, body_half);
      });
      ODB_RETURN_IF_ERROR(st);
    } else if (has_subgraph(node)) {
      // A blocked node's subgraphs read values from here in the float32 they were written for.
      for (const auto& x : implicit_inputs(node))
        if (orig_of(x) == kF32 && cur[x] == kF16) {
          const std::string y = cast_of(x, kF32);
          for_each_subgraph_mut(
              node, [&](onnx::GraphProto& sg, const std::string&) { rename_reads(sg, x, y); });
        }
    } else {
      for (int k = 0; k < node.output_size(); ++k)
        half[k] = !blocked && orig_of(node.output(k)) == kF32 && accepts_fp16(s->outputs(), k);
    }
    if (!blocked)
      ODB_RETURN_IF_ERROR(convert_attributes(node, base_dir_, stats_.constants_converted));
    for (int k = 0; k < node.output_size(); ++k)
      if (const std::string& y = node.output(k); !y.empty()) cur[y] = half[k] ? kF16 : orig_of(y);
    *out.Add() = std::move(node);
  }
  if (!main) {
    // A body's outputs take the types its node now gives: a Cast where the value is not float16.
    for (int k = 0; k < g.output_size() && k < static_cast<int>(half_outputs.size()); ++k) {
      if (!half_outputs[k]) continue;
      auto* o = g.mutable_output(k);
      if (cur[o->name()] != kF16) o->set_name(cast_of(o->name(), kF16));
      if (o->type().has_tensor_type())
        o->mutable_type()->mutable_tensor_type()->set_elem_type(kF16);
    }
    g.clear_value_info();  // its float32 entries are stale; ONNX infers body types again
  }
  g.mutable_node()->Swap(&out);
  if (main) return finish_main_outputs(g, cur);
  return Status::ok();
}

// The main graph's float32 outputs: kept float32 with keep_io_types (a Cast renamed into place),
// else typed as their producer now gives them.
Status Converter::finish_main_outputs(onnx::GraphProto& g, Types& cur) {
  for (auto& o : *g.mutable_output()) {
    const std::string z = o.name();
    if (orig_of(z) != kF32 || !o.type().has_tensor_type()) continue;
    if (!options_.keep_io_types) {
      o.mutable_type()->mutable_tensor_type()->set_elem_type(cur[z]);
      continue;
    }
    if (cur[z] == kF32) continue;
    const std::string inner = fresh(z + "_fp16");
    for (auto& n : *g.mutable_node()) {
      for (auto& y : *n.mutable_output())
        if (y == z) y = inner;
      for (auto& in : *n.mutable_input())
        if (in == z) in = inner;
      for_each_subgraph_mut(
          n, [&](onnx::GraphProto& sg, const std::string&) { rename_reads(sg, z, inner); });
    }
    for (auto& t : *g.mutable_initializer())
      if (t.name() == z) t.set_name(inner);
    make_cast_node(*g.add_node(), fresh(z + "_cast"), inner, z, kF32);
    ++stats_.casts_inserted;
  }
  return Status::ok();
}

}  // namespace

Expected<Fp16Stats> to_fp16(onnx::ModelProto& model, const std::filesystem::path& base_dir,
                            const Fp16Options& options) {
  Fp16Stats stats;
  if (auto sorted = toposort(model); !sorted) return std::move(sorted).status();
  Converter converter(model, base_dir, options, stats);
  auto* g = model.mutable_graph();
  ODB_RETURN_IF_ERROR(converter.convert_graph(*g, {}, /*main=*/true));
  g->clear_value_info();
  refresh_value_info(model, /*update_outputs=*/false);
  return stats;
}

}  // namespace onnxdbg::surgeon
