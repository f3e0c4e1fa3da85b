// Test-data folders of serialized TensorProtos, and the load_tensors() dispatcher.
// The K-th file is matched to the K-th graph value only when the proto carries no name, as the
// ONNX backend test runner does positionally; names win because they cannot be misordered.
#include "data/test_data.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <vector>

#include "core/onnx.h"
#include "data/npy.h"
#include "data/npz.h"
#include "model/model.h"
#include "onnx/onnx-data.pb.h"

namespace onnxdbg {

namespace fs = std::filesystem;

namespace {

// Graph inputs that are not initializers, or the graph outputs, as ValueInfoProtos.
std::vector<const onnx::ValueInfoProto*> graph_values(const onnx::GraphProto& graph, bool inputs) {
  std::vector<const onnx::ValueInfoProto*> out;
  if (!inputs) {
    for (const auto& vi : graph.output()) out.push_back(&vi);
    return out;
  }
  std::set<std::string> inits;
  for (const auto& i : graph.initializer()) inits.insert(i.name());
  for (const auto& vi : graph.input())
    if (!inits.count(vi.name())) out.push_back(&vi);
  return out;
}

// input_K.pb files of `dir`, sorted by K.
Expected<std::vector<std::pair<int64_t, fs::path>>> numbered_files(const fs::path& dir,
                                                                   const std::string& prefix) {
  std::vector<std::pair<int64_t, fs::path>> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string f = it->path().filename().string();
    if (f.size() <= prefix.size() + 3 || f.compare(0, prefix.size(), prefix) != 0 ||
        f.compare(f.size() - 3, 3, ".pb") != 0)
      continue;
    const std::string k = f.substr(prefix.size(), f.size() - prefix.size() - 3);
    if (k.size() > 9 || k.find_first_not_of("0123456789") != std::string::npos) continue;
    files.emplace_back(std::stoll(k), it->path());
  }
  if (ec) return not_found("cannot list folder '" + dir.string() + "': " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

const char* kind_of(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kSequenceType:
      return "a sequence";
    case onnx::TypeProto::kOptionalType:
      return "an optional";
    case onnx::TypeProto::kMapType:
      return "a map";
    case onnx::TypeProto::kSparseTensorType:
      return "a sparse tensor";
    default:
      return nullptr;
  }
}

// Reads one serialized protobuf of type P from `bytes`, or explains which file is not one.
template <class P>
Expected<P> parse_proto(const std::string& bytes, const std::string& what, const char* type_name) {
  P proto;
  if (bytes.size() >= static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromString(bytes))
    return invalid_argument(what + " is not a serialized onnx." + type_name +
                            " (truncated or corrupted)");
  return proto;
}

Expected<Tensor> tensor_of(onnx::TensorProto proto, const onnx::TypeProto* declared,
                           const fs::path& dir) {
  // ONNX 1.12's test generator stored bfloat16 tensors as uint16 bit patterns.
  if (declared && declared->tensor_type().elem_type() == onnx::TensorProto::BFLOAT16 &&
      proto.data_type() == onnx::TensorProto::UINT16)
    proto.set_data_type(onnx::TensorProto::BFLOAT16);
  return tensor_from_proto(proto, dir);
}

// A SequenceProto of tensors (onnx-data.proto); `declared` is the graph's sequence type if known.
Expected<Value> sequence_of(const onnx::SequenceProto& proto, const onnx::TypeProto* declared,
                            const fs::path& dir) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR &&
      proto.elem_type() != onnx::SequenceProto::UNDEFINED)
    return unsupported("sequences of sequences, maps or optionals are not supported");
  Sequence s;
  const onnx::TypeProto* elem =
      declared && declared->has_sequence_type() ? &declared->sequence_type().elem_type() : nullptr;
  if (elem && elem->has_tensor_type()) {
    auto dt = dtype_from_onnx(elem->tensor_type().elem_type());
    if (dt) s.elem_type = *dt;
  }
  for (const auto& tp : proto.tensor_values()) {
    ODB_ASSIGN_OR_RETURN(Tensor t, tensor_of(tp, elem, dir));
    s.elem_type = t.dtype();
    s.tensors.push_back(std::move(t));
  }
  return Value(std::move(s));
}

// An OptionalProto (onnx-data.proto) holding nothing, a tensor or a sequence of tensors.
Expected<Value> optional_of(const onnx::OptionalProto& proto, const onnx::TypeProto* declared,
                            const fs::path& dir) {
  const onnx::TypeProto* elem =
      declared && declared->has_optional_type() ? &declared->optional_type().elem_type() : nullptr;
  if (proto.has_tensor_value()) {
    ODB_ASSIGN_OR_RETURN(Tensor t, tensor_of(proto.tensor_value(), elem, dir));
    return Value::optional_of(std::move(t));
  }
  if (proto.has_sequence_value()) {
    ODB_ASSIGN_OR_RETURN(Value s, sequence_of(proto.sequence_value(), elem, dir));
    return Value::optional_of(std::move(s));
  }
  if (proto.has_sparse_tensor_value() || proto.has_map_value() || proto.has_optional_value())
    return unsupported("optionals of sparse tensors, maps or optionals are not supported");
  return Value::none();
}

Expected<std::map<std::string, Value>> load_numbered(const fs::path& dir,
                                                     const onnx::GraphProto& graph, bool inputs) {
  const std::string prefix = inputs ? "input_" : "output_";
  const std::string role = inputs ? "input" : "output";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return not_found("test-data folder '" + dir.string() + "' does not exist");
  ODB_ASSIGN_OR_RETURN(auto files, numbered_files(dir, prefix));
  const auto values = graph_values(graph, inputs);
  if (files.empty() && !values.empty())
    return not_found("folder '" + dir.string() + "' holds no " + prefix + "K.pb files");
  std::map<std::string, Value> out;
  for (const auto& [k, file] : files) {
    const std::string what = "'" + file.string() + "'";
    const onnx::ValueInfoProto* vi =
        k < static_cast<int64_t>(values.size()) ? values[static_cast<size_t>(k)] : nullptr;
    const onnx::TypeProto* declared = vi ? &vi->type() : nullptr;
    const auto kind = declared ? declared->value_case() : onnx::TypeProto::kTensorType;
    if (kind == onnx::TypeProto::kMapType || kind == onnx::TypeProto::kSparseTensorType)
      return unsupported(what + " holds " + kind_of(*declared) + " value for graph " + role + " '" +
                         vi->name() + "'; only tensors, sequences and optionals are supported");
    ODB_ASSIGN_OR_RETURN(std::string bytes, read_file_bytes(file));
    std::string name;
    Expected<Value> v = Value();
    if (kind == onnx::TypeProto::kSequenceType) {
      ODB_ASSIGN_OR_RETURN(auto proto,
                           parse_proto<onnx::SequenceProto>(bytes, what, "SequenceProto"));
      name = proto.name();
      v = sequence_of(proto, declared, dir);
    } else if (kind == onnx::TypeProto::kOptionalType) {
      ODB_ASSIGN_OR_RETURN(auto proto,
                           parse_proto<onnx::OptionalProto>(bytes, what, "OptionalProto"));
      name = proto.name();
      v = optional_of(proto, declared, dir);
    } else {
      ODB_ASSIGN_OR_RETURN(auto proto, parse_proto<onnx::TensorProto>(bytes, what, "TensorProto"));
      name = proto.name();
      auto t = tensor_of(std::move(proto), declared, dir);
      if (t)
        v = Value(std::move(*t));
      else
        v = std::move(t).status();
    }
    if (!v) return std::move(v).status().with_context("while reading " + what);
    if (name.empty()) {
      if (!vi)
        return invalid_argument(what + " has no name and the graph has only " +
                                std::to_string(values.size()) + " " + role +
                                "(s) to name it by position");
      name = vi->name();
    }
    if (out.count(name))
      return invalid_argument(what + " holds " + role + " '" + name +
                              "', which an earlier file also holds");
    out.emplace(std::move(name), std::move(*v));
  }
  return out;
}

// The tensor-only view of load_numbered, for callers that run tensors only.
Expected<std::map<std::string, Tensor>> tensors_only(Expected<std::map<std::string, Value>> values,
                                                     const fs::path& dir, bool inputs) {
  if (!values) return std::move(values).status();
  std::map<std::string, Tensor> out;
  for (auto& [name, v] : *values) {
    if (!v.is_tensor())
      return unsupported("'" + dir.string() + "' holds " + v.kind_name() + " value for graph " +
                         (inputs ? "input" : "output") + " '" + name +
                         "'; this caller takes tensors only (sequence and optional values need a "
                         "backend that runs them)");
    out.emplace(name, std::move(v.tensor()));
  }
  return out;
}

Status write_numbered(const fs::path& dir, const onnx::GraphProto& graph,
                      const std::map<std::string, Tensor>& tensors, bool inputs) {
  const std::string prefix = inputs ? "input_" : "output_";
  const auto values = graph_values(graph, inputs);
  std::set<std::string> names;
  for (const auto* vi : values) names.insert(vi->name());
  for (const auto& [name, t] : tensors)
    if (!names.count(name))
      return invalid_argument("'" + name + "' is not a graph " + (inputs ? "input" : "output") +
                              "; cannot save it as test data");
  int64_t k = 0;
  for (const auto* vi : values) {
    auto it = tensors.find(vi->name());
    if (it == tensors.end()) continue;
    const fs::path file = dir / (prefix + std::to_string(k++) + ".pb");
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    if (!out || !tensor_to_proto(it->second, vi->name()).SerializeToOstream(&out))
      return invalid_argument("cannot write '" + file.string() + "'");
  }
  return Status::ok();
}

}  // namespace

Expected<std::map<std::string, Tensor>> load_test_data_inputs(const fs::path& dir,
                                                              const onnx::GraphProto& graph) {
  return tensors_only(load_numbered(dir, graph, true), dir, true);
}

Expected<std::map<std::string, Tensor>> load_test_data_outputs(const fs::path& dir,
                                                               const onnx::GraphProto& graph) {
  return tensors_only(load_numbered(dir, graph, false), dir, false);
}

Expected<std::map<std::string, Value>> load_test_data_input_values(const fs::path& dir,
                                                                   const onnx::GraphProto& graph) {
  return load_numbered(dir, graph, true);
}

Expected<std::map<std::string, Value>> load_test_data_output_values(const fs::path& dir,
                                                                    const onnx::GraphProto& graph) {
  return load_numbered(dir, graph, false);
}

Status save_test_data(const fs::path& dir, const onnx::GraphProto& graph,
                      const std::map<std::string, Tensor>& inputs,
                      const std::map<std::string, Tensor>& outputs) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    return invalid_argument("cannot create folder '" + dir.string() + "'");
  for (const char* prefix : {"input_", "output_"}) {
    ODB_ASSIGN_OR_RETURN(auto old, numbered_files(dir, prefix));
    for (const auto& [k, file] : old) {
      fs::remove(file, ec);
      if (ec)
        return invalid_argument("cannot remove stale '" + file.string() + "': " + ec.message());
    }
  }
  ODB_RETURN_IF_ERROR(write_numbered(dir, graph, inputs, true));
  return write_numbered(dir, graph, outputs, false);
}

Expected<std::map<std::string, Tensor>> load_tensors(const fs::path& path,
                                                     const onnx::GraphProto& graph) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return not_found("input data '" + path.string() + "' does not exist");
  if (fs::is_directory(path, ec)) return load_test_data_inputs(path, graph);
  const std::string ext = path.extension().string();
  const std::string what = "'" + path.string() + "'";
  const auto inputs = graph_values(graph, true);
  auto single_name = [&](const std::string& kind) -> Expected<std::string> {
    if (inputs.size() != 1)
      return invalid_argument(what + " holds one unnamed " + kind + " but the model has " +
                              std::to_string(inputs.size()) +
                              " inputs; use an .npz or a test-data folder to name each");
    return inputs[0]->name();
  };
  std::map<std::string, Tensor> out;
  if (ext == ".npz") return load_npz(path);
  if (ext == ".npy") {
    ODB_ASSIGN_OR_RETURN(std::string name, single_name("array"));
    ODB_ASSIGN_OR_RETURN(Tensor t, load_npy(path));
    out.emplace(std::move(name), std::move(t));
    return out;
  }
  if (ext == ".pb") {
    ODB_ASSIGN_OR_RETURN(std::string bytes, read_file_bytes(path));
    onnx::TensorProto proto;
    if (bytes.size() >= static_cast<size_t>(std::numeric_limits<int>::max()) ||
        !proto.ParseFromString(bytes))
      return invalid_argument(what +
                              " is not a serialized onnx.TensorProto (truncated or corrupted)");
    std::string name = proto.name();
    if (name.empty()) {
      ODB_ASSIGN_OR_RETURN(name, single_name("TensorProto"));
    }
    fs::path base = path.parent_path();
    if (base.empty()) base = ".";
    auto t = tensor_from_proto(proto, base);
    if (!t) return std::move(t).status().with_context("while reading " + what);
    out.emplace(std::move(name), std::move(*t));
    return out;
  }
  return invalid_argument(what +
                          " is not a known input format (expected an .npz, .npy or .pb "
                          "file, or a test_data_set folder of input_K.pb files)");
}

}  // namespace onnxdbg
