// precision=fp16 backends in the layerwise pass (see pass.h): every model they load converted
// to float16 (graph inputs and outputs kept float32), the tensors they computed in float32
// noted, and the nodes that read a tensor that overflowed there found.
#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "comparator/precision.h"
#include "layerwise/node_models.h"
#include "layerwise/pass.h"

namespace onnxdbg::layerwise_detail {

namespace fs = std::filesystem;

/// Which backends run in float16, and the whole model they load: the model itself, or one copy
/// converted to float16 shared by every precision=fp16 backend. A model the conversion refuses
/// fails those backends only.
Status Pass::prepare_fp16(const std::vector<BackendSpec>& specs) {
  fp16_.assign(specs.size(), false);
  plain_casts_.assign(specs.size(), 0);
  load_paths_.assign(specs.size(), whole_path_);
  std::optional<Expected<int64_t>> converted;
  const fs::path path = tmp_ / "model_fp16.onnx";
  for (size_t k = 0; k < specs.size(); ++k) {
    fp16_[k] = specs[k].option("precision") == "fp16";
    if (!fp16_[k]) continue;
    if (!converted) {
      progress("layerwise: converting the model to float16");
      onnx::ModelProto m = model_.proto;
      converted = convert_model_to_fp16(m, model_.base_dir);
      if (*converted) {
        if (Status st = save_model(m, path); !st) converted = Expected<int64_t>(st);
      }
    }
    if (!*converted) {
      fail(k, converted->status());
      continue;
    }
    load_paths_[k] = path;
    plain_casts_[k] = **converted;
  }
  return Status::ok();
}

/// Saves `m` (the model, or part of it, with float32 types) as backend `k` loads it: converted
/// to float16 for a precision=fp16 backend. Returns the Casts the conversion added beyond
/// those of the whole model's conversion (one per extra float output), 0 for others.
Expected<int64_t> Pass::save_for_backend(size_t k, onnx::ModelProto& m, const fs::path& path) {
  int64_t extra = 0;
  if (fp16_[k]) {
    ODB_ASSIGN_OR_RETURN(int64_t casts, convert_model_to_fp16(m, model_.base_dir));
    extra = casts - plain_casts_[k];
  }
  ODB_RETURN_IF_ERROR(save_model(m, path));
  return extra;
}

/// A float16 backend (precision=fp16, or any backend on a model that is float16 itself) that
/// computed some tensors in float32 does not show float16's rounding or overflow there: say how
/// many and where, once.
void Pass::note_float32_tensors(size_t k, const std::vector<BackendSpec>& specs) {
  LayerwiseBackend& b = rep_.backends[k];
  // The tensors a float16 run computes: float32 ones converted (precision=fp16), or the model's
  // own float16 ones.
  const DType computed = fp16_[k] ? DType::kFloat : DType::kFloat16;
  int floats = 0, isolated = 0, alone_in_float32 = 0;
  const LayerComparison *first = nullptr, *first_alone = nullptr;
  for (const auto& c : rep_.comparisons) {
    if (c.backend != b.backend || !c.observed || rep_.tensors[c.tensor].dtype != computed) continue;
    ++floats;
    if (c.computed_in_float32 && !first) first = &c;
    isolated += c.own.has_value();
    alone_in_float32 += c.own_computed_in_float32;
    if (c.own_computed_in_float32 && !first_alone) first_alone = &c;
  }
  const std::string why = backend_traits(specs[k].name).float32_compute_reason;
  auto where = [&](const LayerComparison& c) {
    const LayerTensor& t = rep_.tensors[c.tensor];
    return fmt::format(
        "'{}' of node {}", t.name,
        node_label(model_.proto.graph().node(static_cast<int>(t.node_index)), t.node_index));
  };
  if (first)
    b.notes.push_back(fmt::format(
        "{} of {} float tensors hold values float16 cannot represent (first: {}): the backend "
        "computed them in float32, so float16 rounding and overflow do not show there{}",
        b.computed_in_float32, floats, where(*first), why));
  if (first_alone)
    b.notes.push_back(fmt::format(
        "{} of {} isolated float tensors hold values float16 cannot represent (first: {}): "
        "alone, the backend computed those nodes in float32, so their own error shows no "
        "float16 rounding or overflow{}",
        alone_in_float32, isolated, where(*first_alone), first ? "" : why));
}

/// Intermediate tensors that overflowed on this float16 backend (golden values beyond float16's
/// range, and outside tolerance here): as golden inputs they are +-inf in float16 too, so a node
/// reading one inherits the overflow. (A backend may compute in float32 where it lacks a float16
/// kernel; the tensor then did not overflow there, and counts as usual.)
std::set<size_t> Pass::nodes_reading_overflow(size_t k, const std::vector<size_t>& nodes) const {
  std::set<size_t> beyond_fp16;
  std::set<std::string_view> overflowed;
  for (const auto& c : rep_.comparisons) {
    const LayerTensor& t = rep_.tensors[c.tensor];
    if (c.backend == rep_.backends[k].backend && !c.pass() && is_floating(t.dtype) &&
        t.golden_max_abs > kFloat16Max)
      overflowed.insert(t.name);
  }
  for (size_t idx : nodes)
    for (const auto& n : node_reads(model_.proto.graph().node(static_cast<int>(idx))))
      if (overflowed.count(n)) beyond_fp16.insert(idx);
  return beyond_fp16;
}

}  // namespace onnxdbg::layerwise_detail
