// The bug-report folder of the first divergent node (save_layerwise_repro in layerwise.h): the
// node alone as model.onnx and its golden inputs and outputs as test_data_set_0, written to a
// staging folder and renamed into place.
#include <fmt/format.h>
#include <stdlib.h>

#include <set>

#include "comparator/precision.h"
#include "core/temp_dir.h"
#include "data/test_data.h"
#include "layerwise/golden_stream.h"
#include "layerwise/layerwise.h"
#include "layerwise/node_models.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

/// Golden values of everything `node` reads and writes (see add_golden_names): those isolation
/// kept in report.first_node_values when it holds them all, else the `loaded` golden values
/// (when given) and one more reference run for the others.
Expected<TensorMap> node_golden_values(const LoadedModel& model, const TensorMap& inputs,
                                       const LayerwiseReport& report, const onnx::NodeProto& node,
                                       const reference::InterpreterOptions& options,
                                       const TensorMap* loaded) {
  std::set<std::string> initializers;
  for (const auto& i : model.proto.graph().initializer()) initializers.insert(i.name());
  std::set<std::string> names;
  layerwise_detail::add_golden_names(node, initializers, inputs, &names);
  bool have = true;
  for (const auto& n : names) have = have && report.first_node_values.count(n);
  TensorMap golden;
  if (have) {
    for (const auto& n : names) golden[n] = report.first_node_values.at(n);
    return golden;
  }
  ODB_ASSIGN_OR_RETURN(layerwise_detail::GoldenSource src,
                       layerwise_detail::GoldenSource::create(model, inputs, options, loaded));
  return src.capture(names);
}

/// Writes `m` and its test data into a staging folder beside `dir`, then replaces `dir` with it.
Status write_repro_folder(const onnx::ModelProto& m, const TensorMap& in, const TensorMap& out,
                          const fs::path& dir) {
  std::error_code ec;
  const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  fs::create_directories(parent, ec);
  // The staging folder goes with its contents unless it became `dir`.
  auto staging = TempDir::create(".onnxdbg-repro-", parent);
  if (!staging) return invalid_argument(fmt::format("cannot write into '{}'", parent.string()));
  Status st = save_model(m, staging->path() / "model.onnx");
  if (st.is_ok()) st = save_test_data(staging->path() / "test_data_set_0", m.graph(), in, out);
  if (st.is_ok()) {
    fs::remove_all(dir, ec);
    fs::rename(staging->path(), dir, ec);
    if (ec)
      st = invalid_argument(fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
    else
      staging->release();
  }
  return st;
}

}  // namespace

Status save_layerwise_repro(const LoadedModel& file_model, const TensorMap& inputs,
                            LayerwiseReport& report, const fs::path& dir,
                            const reference::InterpreterOptions& options, const TensorMap* loaded) {
  if (!report.first) return invalid_argument("no divergent node to write a repro for");
  // The report's node indices are those of the model as run_layerwise ran it (Ifs replaced by
  // their taken branches, in run order).
  std::optional<LoadedModel> copy;
  const LoadedModel& model = layerwise_detail::as_run(file_model, inputs, options, copy, nullptr);
  const LayerTensor& t = report.tensors[report.first->tensor];
  const auto& g = model.proto.graph();
  const auto& node = g.node(static_cast<int>(t.node_index));
  std::error_code ec;
  if (fs::exists(dir, ec) &&
      !(fs::exists(dir / "model.onnx", ec) && fs::exists(dir / "test_data_set_0", ec))) {
    return invalid_argument(fmt::format(
        "'{}' exists and is not an earlier onnxdbg repro folder; give another --save-repro",
        dir.string()));
  }
  ODB_ASSIGN_OR_RETURN(TensorMap golden,
                       node_golden_values(model, inputs, report, node, options, loaded));
  TensorMap constants =
      layerwise_detail::take_constants(golden, layerwise_detail::constant_node_outputs(g), inputs);
  ODB_ASSIGN_OR_RETURN(onnx::ModelProto m,
                       single_node_model(model, t.node_index, constants, golden));
  if (report.first->precision == "fp16")
    if (auto converted = convert_model_to_fp16(m, model.base_dir); !converted)
      return converted.status();
  TensorMap in, out;
  for (const auto& v : m.graph().input()) in[v.name()] = golden.at(v.name());
  for (const auto& v : m.graph().output()) out[v.name()] = golden.at(v.name());
  ODB_RETURN_IF_ERROR(write_repro_folder(m, in, out, dir));
  report.repro_dir = dir;
  return Status::ok();
}

}  // namespace onnxdbg
