// `surgeon extract`: the subgraph between given tensors, with "auto" types from shape inference
// and an error naming the value an output would still need when the cut is not closed.
#include <algorithm>
#include <cctype>

#include "model/graph.h"
#include "model/shape_inference.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {

namespace {

Expected<Shape> parse_shape(const std::string& text, const std::string& item) {
  std::string s = text;
  const bool bracketed = s.size() >= 2 && s.front() == '[' && s.back() == ']';
  if (bracketed) s = s.substr(1, s.size() - 2);
  Shape out;
  if (s.empty()) {
    if (bracketed) return out;  // "[]": a scalar
    return invalid_argument("empty shape in '" + item + "'");
  }
  const char sep = bracketed ? ',' : 'x';
  size_t pos = 0;
  for (;;) {
    const size_t next = s.find(sep, pos);
    std::string d = s.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    while (!d.empty() && d.front() == ' ') d.erase(d.begin());
    while (!d.empty() && d.back() == ' ') d.pop_back();
    if (d.empty()) return invalid_argument("empty dimension in the shape of '" + item + "'");
    if (std::isdigit(static_cast<unsigned char>(d[0]))) {
      try {
        out.push_back(std::stoll(d));
      } catch (const std::exception&) {
        return invalid_argument("bad dimension '" + d + "' in '" + item + "'");
      }
    } else {
      out.push_back(-1);  // "?" or a symbolic name: stays dynamic
    }
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return out;
}

}  // namespace

Expected<ExtractTensor> parse_extract_tensor(const std::string& item, bool is_output) {
  ExtractTensor t;
  std::string rest = item;
  auto take_last = [&]() -> std::optional<std::string> {
    const size_t c = rest.rfind(':');
    // A ':' inside brackets belongs to no field; shapes never contain one, so this is fine.
    if (c == std::string::npos) return std::nullopt;
    std::string f = rest.substr(c + 1);
    rest = rest.substr(0, c);
    return f;
  };
  std::optional<std::string> dtype, shape;
  if (is_output) {
    dtype = take_last();
  } else {
    const size_t colons = static_cast<size_t>(std::count(item.begin(), item.end(), ':'));
    if (colons >= 2) {
      dtype = take_last();
      shape = take_last();
    } else if (colons == 1) {
      shape = take_last();
    }
  }
  t.name = rest;
  if (t.name.empty()) return invalid_argument("no tensor name in '" + item + "'");
  if (dtype && *dtype != "auto") {
    auto d = dtype_from_name(*dtype);
    if (!d) return invalid_argument("unknown dtype '" + *dtype + "' in '" + item + "'");
    t.dtype = *d;
  }
  if (shape && *shape != "auto") {
    ODB_ASSIGN_OR_RETURN(Shape s, parse_shape(*shape, item));
    t.shape = std::move(s);
  }
  return t;
}

Status extract(onnx::ModelProto& model, const std::vector<ExtractTensor>& inputs,
               const std::vector<ExtractTensor>& outputs) {
  if (outputs.empty()) return invalid_argument("extract needs at least one output");
  const onnx::GraphProto& g = model.graph();
  const auto prod = producers(g);
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer()) inits[t.name()] = &t;
  std::unordered_map<std::string, const onnx::TypeProto*> declared;
  for (const auto& vi : g.input()) declared[vi.name()] = &vi.type();
  for (const auto& vi : g.value_info()) declared.emplace(vi.name(), &vi.type());
  for (const auto& vi : g.output()) declared.emplace(vi.name(), &vi.type());
  auto exists = [&](const std::string& n) {
    return prod.count(n) || inits.count(n) || declared.count(n);
  };
  std::unordered_set<std::string> given;
  for (const auto& t : inputs) {
    if (!exists(t.name)) return not_found("input '" + t.name + "' is not a tensor of the model");
    given.insert(t.name);
  }
  for (const auto& t : outputs)
    if (!exists(t.name)) return not_found("output '" + t.name + "' is not a tensor of the model");

  // Walk back from each output; stop at given inputs and initializers.
  std::vector<bool> keep(static_cast<size_t>(g.node_size()), false);
  std::unordered_set<std::string> seen, used_inits;
  for (const auto& out : outputs) {
    std::vector<std::pair<std::string, int>> work{{out.name, -1}};  // (name, reading node)
    while (!work.empty()) {
      auto [name, reader] = work.back();
      work.pop_back();
      if (!seen.insert(name).second) continue;
      if (given.count(name)) continue;
      auto p = prod.find(name);
      if (p != prod.end()) {
        if (keep[static_cast<size_t>(p->second)]) continue;
        keep[static_cast<size_t>(p->second)] = true;
        for (const auto& r : node_reads(g.node(p->second))) work.emplace_back(r, p->second);
        continue;
      }
      if (inits.count(name)) {
        used_inits.insert(name);
        continue;
      }
      const std::string what = declared.count(name)
                                   ? "a graph input of the model"
                                   : "a value no node, initializer or input defines";
      return invalid_argument(
          "output '" + out.name + "' does not depend on the given inputs and initializers only: " +
          "it would still need '" + name + "' (" + what + ")" +
          (reader >= 0 ? ", read by node " + node_label(g.node(reader), reader) : "") +
          "; add it to --inputs");
    }
  }

  const InferredTypes inferred = infer_shapes(model);
  auto type_of = [&](const std::string& name) -> std::optional<onnx::TypeProto> {
    if (auto it = inits.find(name); it != inits.end()) {
      onnx::TypeProto t;
      auto* tt = t.mutable_tensor_type();
      tt->set_elem_type(it->second->data_type());
      auto* s = tt->mutable_shape();
      for (auto d : it->second->dims()) s->add_dim()->set_dim_value(d);
      return t;
    }
    if (auto it = inferred.types.find(name); it != inferred.types.end()) return it->second;
    if (auto it = declared.find(name); it != declared.end()) return *it->second;
    return std::nullopt;
  };
  auto make_vi = [&](const ExtractTensor& t, const char* role) -> Expected<onnx::ValueInfoProto> {
    onnx::ValueInfoProto vi;
    vi.set_name(t.name);
    auto known = type_of(t.name);
    if (known) *vi.mutable_type() = *known;
    auto* tt = vi.mutable_type()->mutable_tensor_type();
    if (t.dtype != DType::kUndefined) tt->set_elem_type(static_cast<int32_t>(t.dtype));
    if (tt->elem_type() == 0)
      return invalid_argument(std::string(role) + " '" + t.name +
                              "': shape inference does not know its dtype; give it "
                              "(NAME:SHAPE:DTYPE, e.g. " +
                              t.name + ":auto:float32)");
    if (t.shape) {
      auto* s = tt->mutable_shape();
      s->clear_dim();
      for (auto d : *t.shape) {
        auto* dim = s->add_dim();
        if (d >= 0) dim->set_dim_value(d);
      }
    }
    return vi;
  };

  onnx::GraphProto out;
  out.set_name(g.name());
  out.set_doc_string(g.doc_string());
  for (const auto& t : inputs) {
    ODB_ASSIGN_OR_RETURN(auto vi, make_vi(t, "input"));
    *out.add_input() = std::move(vi);
  }
  for (const auto& t : g.initializer())
    if (used_inits.count(t.name()) && !given.count(t.name())) *out.add_initializer() = t;
  for (int i = 0; i < g.node_size(); ++i)
    if (keep[static_cast<size_t>(i)]) *out.add_node() = g.node(i);
  for (const auto& t : outputs) {
    ODB_ASSIGN_OR_RETURN(auto vi, make_vi(t, "output"));
    *out.add_output() = std::move(vi);
  }
  model.mutable_graph()->Swap(&out);
  refresh_value_info(model, /*update_outputs=*/false);
  return Status::ok();
}

}  // namespace onnxdbg::surgeon
