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

namespace {

// extract's steps on one model: the names it knows, the nodes between the given inputs and the
// outputs (walked back from each output), the boundary values' types, the new graph.
class Extractor {
 public:
  explicit Extractor(const onnx::ModelProto& model)
      : model_(model), g_(model.graph()), prod_(producers(g_)) {
    for (const auto& t : g_.initializer()) inits_[t.name()] = &t;
    for (const auto& vi : g_.input()) declared_[vi.name()] = &vi.type();
    for (const auto& vi : g_.value_info()) declared_.emplace(vi.name(), &vi.type());
    for (const auto& vi : g_.output()) declared_.emplace(vi.name(), &vi.type());
  }

  Expected<onnx::GraphProto> extract(const std::vector<ExtractTensor>& inputs,
                                     const std::vector<ExtractTensor>& outputs) {
    for (const auto& t : inputs) {
      if (!exists(t.name)) return not_found("input '" + t.name + "' is not a tensor of the model");
      given_.insert(t.name);
    }
    for (const auto& t : outputs)
      if (!exists(t.name)) return not_found("output '" + t.name + "' is not a tensor of the model");
    keep_.assign(static_cast<size_t>(g_.node_size()), false);
    for (const auto& out : outputs) ODB_RETURN_IF_ERROR(walk_back(out.name));
    inferred_ = infer_shapes(model_);

    onnx::GraphProto out;
    out.set_name(g_.name());
    out.set_doc_string(g_.doc_string());
    for (const auto& t : inputs) {
      ODB_ASSIGN_OR_RETURN(auto vi, value_info(t, "input"));
      *out.add_input() = std::move(vi);
    }
    for (const auto& t : g_.initializer())
      if (used_inits_.count(t.name()) && !given_.count(t.name())) *out.add_initializer() = t;
    for (int i = 0; i < g_.node_size(); ++i)
      if (keep_[static_cast<size_t>(i)]) *out.add_node() = g_.node(i);
    for (const auto& t : outputs) {
      ODB_ASSIGN_OR_RETURN(auto vi, value_info(t, "output"));
      *out.add_output() = std::move(vi);
    }
    return out;
  }

 private:
  bool exists(const std::string& n) const {
    return prod_.count(n) || inits_.count(n) || declared_.count(n);
  }
  Status walk_back(const std::string& output);
  std::optional<onnx::TypeProto> type_of(const std::string& name) const;
  Expected<onnx::ValueInfoProto> value_info(const ExtractTensor& t, const char* role) const;

  const onnx::ModelProto& model_;
  const onnx::GraphProto& g_;
  const std::unordered_map<std::string, int> prod_;
  std::unordered_map<std::string, const onnx::TensorProto*> inits_;
  std::unordered_map<std::string, const onnx::TypeProto*> declared_;
  std::unordered_set<std::string> given_, seen_, used_inits_;
  std::vector<bool> keep_;
  InferredTypes inferred_;
};

// Marks the nodes `output` needs, stopping at given inputs and initializers; an error names the
// first value it would still need.
Status Extractor::walk_back(const std::string& output) {
  std::vector<std::pair<std::string, int>> work{{output, -1}};  // (name, reading node)
  while (!work.empty()) {
    auto [name, reader] = work.back();
    work.pop_back();
    if (!seen_.insert(name).second) continue;
    if (given_.count(name)) continue;
    auto p = prod_.find(name);
    if (p != prod_.end()) {
      if (keep_[static_cast<size_t>(p->second)]) continue;
      keep_[static_cast<size_t>(p->second)] = true;
      for (const auto& r : node_reads(g_.node(p->second))) work.emplace_back(r, p->second);
      continue;
    }
    if (inits_.count(name)) {
      used_inits_.insert(name);
      continue;
    }
    const std::string what = declared_.count(name)
                                 ? "a graph input of the model"
                                 : "a value no node, initializer or input defines";
    return invalid_argument(
        "output '" + output + "' does not depend on the given inputs and initializers only: " +
        "it would still need '" + name + "' (" + what + ")" +
        (reader >= 0 ? ", read by node " + node_label(g_.node(reader), reader) : "") +
        "; add it to --inputs");
  }
  return Status::ok();
}

// A value's type: an initializer's, else shape inference's, else the model's declaration.
std::optional<onnx::TypeProto> Extractor::type_of(const std::string& name) const {
  if (auto it = inits_.find(name); it != inits_.end()) {
    onnx::TypeProto t;
    auto* tt = t.mutable_tensor_type();
    tt->set_elem_type(it->second->data_type());
    auto* s = tt->mutable_shape();
    for (auto d : it->second->dims()) s->add_dim()->set_dim_value(d);
    return t;
  }
  if (auto it = inferred_.types.find(name); it != inferred_.types.end()) return it->second;
  if (auto it = declared_.find(name); it != declared_.end()) return *it->second;
  return std::nullopt;
}

// The declaration of a new input or output: its known type, with the dtype and shape `t` gives.
Expected<onnx::ValueInfoProto> Extractor::value_info(const ExtractTensor& t,
                                                     const char* role) const {
  onnx::ValueInfoProto vi;
  vi.set_name(t.name);
  if (auto known = type_of(t.name)) *vi.mutable_type() = *known;
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
}

}  // namespace

Status extract(onnx::ModelProto& model, const std::vector<ExtractTensor>& inputs,
               const std::vector<ExtractTensor>& outputs) {
  if (outputs.empty()) return invalid_argument("extract needs at least one output");
  ODB_ASSIGN_OR_RETURN(onnx::GraphProto out, Extractor(model).extract(inputs, outputs));
  model.mutable_graph()->Swap(&out);
  refresh_value_info(model, /*update_outputs=*/false);
  return Status::ok();
}

}  // namespace onnxdbg::surgeon
