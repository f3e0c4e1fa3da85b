// `surgeon to-fp16`: float32 weights and activations to float16. Each node's inputs get the type
// it accepts (its schema, or float32 for blocked ops), with one Cast per (tensor, type) inserted
// where the producer's type differs; graph inputs/outputs optionally stay float32.
#include <algorithm>
#include <cmath>

#include "core/onnx.h"
#include "model/graph.h"
#include "model/shape_inference.h"
#include "onnx/defs/schema.h"
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

}  // namespace

Expected<Fp16Stats> to_fp16(onnx::ModelProto& model, const std::filesystem::path& base_dir,
                            const Fp16Options& options) {
  Fp16Stats stats;
  if (auto sorted = toposort(model); !sorted) return std::move(sorted).status();
  const InferredTypes inferred = infer_shapes(model);
  auto* g = model.mutable_graph();
  std::unordered_map<std::string, int32_t> orig;  // element type before conversion
  for (const auto& [name, t] : inferred.types)
    if (t.has_tensor_type()) orig[name] = t.tensor_type().elem_type();
  for (const auto& vi : g->value_info())
    if (vi.type().has_tensor_type()) orig.emplace(vi.name(), vi.type().tensor_type().elem_type());
  for (const auto& vi : g->input())
    if (vi.type().has_tensor_type()) orig[vi.name()] = vi.type().tensor_type().elem_type();
  for (const auto& vi : g->output())
    if (vi.type().has_tensor_type()) orig.emplace(vi.name(), vi.type().tensor_type().elem_type());
  for (const auto& t : g->initializer()) orig[t.name()] = t.data_type();
  auto orig_of = [&](const std::string& n) {
    auto it = orig.find(n);
    return it == orig.end() ? 0 : it->second;
  };

  const std::unordered_set<std::string> blocked_ops(options.block_list.begin(),
                                                    options.block_list.end());
  std::unordered_map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import())
    opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  auto schema_of = [&](const onnx::NodeProto& n) -> const onnx::OpSchema* {
    const std::string d = n.domain() == "ai.onnx" ? "" : n.domain();
    auto it = opsets.find(d);
    if (it == opsets.end()) return nullptr;
    return onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(it->second), d);
  };
  auto is_blocked = [&](const onnx::NodeProto& n) {
    return blocked_ops.count(n.op_type()) || !schema_of(n) || has_subgraph(n);
  };

  // Which float32 initializers some consumer wants as float16.
  std::unordered_set<std::string> init_names, half_inits;
  for (const auto& t : g->initializer()) init_names.insert(t.name());
  for (const auto& n : g->node()) {
    if (is_blocked(n)) continue;
    const auto* s = schema_of(n);
    for (int k = 0; k < n.input_size(); ++k)
      if (init_names.count(n.input(k)) && orig_of(n.input(k)) == kF32 &&
          accepts_fp16(s->inputs(), k))
        half_inits.insert(n.input(k));
  }
  if (!options.keep_io_types)
    for (const auto& o : g->output())
      if (init_names.count(o.name()) && orig_of(o.name()) == kF32) half_inits.insert(o.name());

  std::unordered_map<std::string, int32_t> cur;  // element type after conversion
  for (const auto& [n, t] : orig) cur[n] = t;
  for (auto& t : *g->mutable_initializer())
    if (half_inits.count(t.name())) {
      ODB_RETURN_IF_ERROR(tensor_proto_to_half(t, base_dir));
      cur[t.name()] = kF16;
      ++stats.initializers_converted;
    }
  for (auto& vi : *g->mutable_input())
    if (!options.keep_io_types && !init_names.count(vi.name()) && orig_of(vi.name()) == kF32) {
      vi.mutable_type()->mutable_tensor_type()->set_elem_type(kF16);
      cur[vi.name()] = kF16;
    }

  std::unordered_set<std::string> taken;
  for (const auto& [n, t] : orig) taken.insert(n);
  for (const auto& n : g->node()) {
    taken.insert(n.name());
    for (const auto& o : n.output()) taken.insert(o);
  }
  auto fresh = [&](const std::string& base) {
    std::string name = base;
    for (int i = 1; taken.count(name); ++i) name = base + "_" + std::to_string(i);
    taken.insert(name);
    return name;
  };
  std::map<std::pair<std::string, int32_t>, std::string> casts;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
  auto cast_of = [&](const std::string& x, int32_t to) {
    auto key = std::make_pair(x, to);
    if (auto it = casts.find(key); it != casts.end()) return it->second;
    const std::string y = fresh(x + (to == kF16 ? "_fp16" : "_fp32"));
    make_cast_node(*out.Add(), fresh(y + "_cast"), x, y, to);
    cur[y] = to;
    casts[key] = y;
    ++stats.casts_inserted;
    return y;
  };

  for (auto& node : *g->mutable_node()) {
    const bool blocked = is_blocked(node);
    const auto* s = blocked ? nullptr : schema_of(node);
    stats.blocked_nodes += blocked;
    for (int k = 0; k < node.input_size(); ++k) {
      const std::string x = node.input(k);
      if (x.empty() || orig_of(x) != kF32) continue;
      const int32_t want = !blocked && accepts_fp16(s->inputs(), k) ? kF16 : kF32;
      if (cur[x] != want) node.set_input(k, cast_of(x, want));
    }
    if (has_subgraph(node)) {
      // Values a subgraph reads from here must keep the float32 the subgraph was written for.
      for (const auto& x : implicit_inputs(node))
        if (orig_of(x) == kF32 && cur[x] == kF16) {
          const std::string y = cast_of(x, kF32);
          for_each_subgraph_mut(
              node, [&](onnx::GraphProto& sg, const std::string&) { rename_reads(sg, x, y); });
        }
    }
    if (!blocked)
      ODB_RETURN_IF_ERROR(convert_attributes(node, base_dir, stats.constants_converted));
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& y = node.output(k);
      if (y.empty()) continue;
      cur[y] = orig_of(y) == kF32 && !blocked && accepts_fp16(s->outputs(), k) ? kF16 : orig_of(y);
    }
    *out.Add() = std::move(node);
  }
  g->mutable_node()->Swap(&out);

  // Graph outputs: float32 kept with --keep-io-types (a Cast renamed into place), else whatever
  // the producer now gives.
  for (auto& o : *g->mutable_output()) {
    const std::string z = o.name();
    if (orig_of(z) != kF32 || !o.type().has_tensor_type()) continue;
    if (!options.keep_io_types) {
      o.mutable_type()->mutable_tensor_type()->set_elem_type(cur[z]);
      continue;
    }
    if (cur[z] == kF32) continue;
    const std::string inner = fresh(z + "_fp16");
    for (auto& n : *g->mutable_node()) {
      for (auto& y : *n.mutable_output())
        if (y == z) y = inner;
      for (auto& in : *n.mutable_input())
        if (in == z) in = inner;
      for_each_subgraph_mut(
          n, [&](onnx::GraphProto& sg, const std::string&) { rename_reads(sg, z, inner); });
    }
    for (auto& t : *g->mutable_initializer())
      if (t.name() == z) t.set_name(inner);
    make_cast_node(*g->add_node(), fresh(z + "_cast"), inner, z, kF32);
    ++stats.casts_inserted;
  }
  g->clear_value_info();
  refresh_value_info(model, /*update_outputs=*/false);
  return stats;
}

}  // namespace onnxdbg::surgeon
