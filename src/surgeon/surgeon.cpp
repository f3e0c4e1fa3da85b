// What every surgeon edit shares: checking the result with lint before it is written, and
// writing it with its external data resolved (inline when small, a .data file when over 2 GiB).
#include "surgeon/surgeon.h"

#include <fstream>
#include <limits>

#include "core/numel.h"
#include "lint/lint.h"
#include "model/graph.h"

namespace onnxdbg::surgeon {

namespace fs = std::filesystem;

int64_t count_nodes(const onnx::GraphProto& g) {
  int64_t n = 0;
  walk_graphs(g, [&](const GraphVisit& v) { n += v.graph->node_size(); });
  return n;
}

std::string EditCheck::summary() const {
  if (errors.empty()) return "";
  std::string list;
  for (size_t i = 0; i < errors.size() && i < 5; ++i) list += (i ? "; " : "") + errors[i];
  if (errors.size() > 5) list += "; and " + std::to_string(errors.size() - 5) + " more";
  return "the edited model has " + std::to_string(errors.size()) + " lint error" +
         (errors.size() == 1 ? "" : "s") + ": " + list;
}

Expected<EditCheck> check_edit(const onnx::ModelProto& model, const fs::path& base_dir) {
  LoadedModel lm;
  lm.proto = model;
  lm.base_dir = base_dir;
  ODB_ASSIGN_OR_RETURN(auto findings, lint::lint_model(lm));
  EditCheck check;
  for (const auto& f : findings)
    if (f.severity == lint::Severity::kError)
      check.errors.push_back(f.rule + ": " +
                             (f.graph != "main" && !f.graph.empty() ? f.graph + ": " : "") +
                             f.message);
  return check;
}

Status finish_edit(const onnx::ModelProto& model, const fs::path& base_dir) {
  ODB_ASSIGN_OR_RETURN(EditCheck check, check_edit(model, base_dir));
  if (check.errors.empty()) return Status::ok();
  return model_error(check.summary() + ", so it was not written");
}

namespace {

bool is_external(const onnx::TensorProto& t) {
  return t.data_location() == onnx::TensorProto::EXTERNAL;
}

int64_t external_bytes(const onnx::TensorProto& t) {
  auto dt = dtype_from_onnx(t.data_type());
  if (!dt) return 0;
  const int64_t n = saturating_numel(t.dims());
  auto bytes = dtype_storage_bytes(*dt, n < 0 ? 0 : n);  // packed for int4 and the like
  return bytes ? static_cast<int64_t>(*bytes) : std::numeric_limits<int64_t>::max();
}

template <class Fn>
Status for_each_initializer(onnx::GraphProto& g, Fn&& fn) {
  for (auto& t : *g.mutable_initializer()) ODB_RETURN_IF_ERROR(fn(t));
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) ODB_RETURN_IF_ERROR(for_each_initializer(*a.mutable_g(), fn));
      for (auto& sg : *a.mutable_graphs()) ODB_RETURN_IF_ERROR(for_each_initializer(sg, fn));
    }
  return Status::ok();
}

}  // namespace

Status save_edited_model(const onnx::ModelProto& model, const fs::path& base_dir,
                         const fs::path& out) {
  onnx::ModelProto copy = model;
  int64_t external = 0;
  ODB_RETURN_IF_ERROR(for_each_initializer(*copy.mutable_graph(), [&](onnx::TensorProto& t) {
    if (is_external(t)) external += external_bytes(t);
    return Status::ok();
  }));
  // Protobuf refuses messages of 2 GiB; leave headroom for the graph itself.
  constexpr int64_t kInlineLimit = (int64_t{2} << 30) - (int64_t{64} << 20);
  const int64_t total = static_cast<int64_t>(copy.ByteSizeLong()) + external;
  if (total < kInlineLimit) {
    if (external > 0)
      ODB_RETURN_IF_ERROR(for_each_initializer(*copy.mutable_graph(), [&](onnx::TensorProto& t) {
        if (!is_external(t)) return Status::ok();
        ODB_ASSIGN_OR_RETURN(Tensor v, tensor_from_proto(t, base_dir));
        onnx::TensorProto inl = tensor_to_proto(v, t.name());
        inl.set_doc_string(t.doc_string());
        t = std::move(inl);
        return Status::ok();
      }));
    return save_model(copy, out);
  }
  // Too large for one protobuf: every initializer over 1 KiB goes to one data file next to `out`.
  const std::string data_name = out.filename().string() + ".data";
  const fs::path data_path = out.parent_path() / data_name;
  std::ofstream data(data_path, std::ios::binary | std::ios::trunc);
  if (!data)
    return invalid_argument("cannot write external data file '" + data_path.string() + "'");
  int64_t offset = 0;
  ODB_RETURN_IF_ERROR(for_each_initializer(*copy.mutable_graph(), [&](onnx::TensorProto& t) {
    if (t.data_type() == onnx::TensorProto::STRING) return Status::ok();
    if (!is_external(t) && static_cast<int64_t>(t.ByteSizeLong()) <= 1024) return Status::ok();
    ODB_ASSIGN_OR_RETURN(Tensor v, tensor_from_proto(t, base_dir));
    onnx::TensorProto raw = tensor_to_proto(v, t.name());
    const std::string& bytes = raw.raw_data();
    data.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!data)
      return invalid_argument("cannot write external data file '" + data_path.string() + "'");
    raw.clear_raw_data();
    raw.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const std::string& k, const std::string& v2) {
      auto* e = raw.add_external_data();
      e->set_key(k);
      e->set_value(v2);
    };
    add("location", data_name);
    add("offset", std::to_string(offset));
    add("length", std::to_string(bytes.size()));
    offset += static_cast<int64_t>(bytes.size());
    t = std::move(raw);
    return Status::ok();
  }));
  data.close();
  if (!data)
    return invalid_argument("cannot write external data file '" + data_path.string() + "'");
  return save_model(copy, out);
}

}  // namespace onnxdbg::surgeon
