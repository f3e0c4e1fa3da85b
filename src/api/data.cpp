// api::data_to_input (include/onnxdbg/data.h).
#include "onnxdbg/data.h"

#include <set>
#include <string>

#include "data/samples.h"
#include "model/model.h"

namespace onnxdbg::api {

namespace {

// Checks every merged tensor against `model_path`'s tensors; other backends' outputs
// (BACKEND/OUTPUT, as `run --save-outputs` writes them) are left out and counted.
Expected<size_t> keep_model_tensors(const std::filesystem::path& model_path,
                                    std::vector<Sample>& merged) {
  ODB_ASSIGN_OR_RETURN(LoadedModel model, load_model(model_path));
  const onnx::GraphProto& g = model.proto.graph();
  std::set<std::string> values, outputs;
  for (const auto& i : g.input()) values.insert(i.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) values.insert(o);
  for (const auto& o : g.output()) outputs.insert(o.name());
  size_t dropped = 0;
  for (auto& s : merged) {
    dropped += std::erase_if(s, [&](const auto& kv) {
      const size_t slash = kv.first.rfind('/');
      return !values.count(kv.first) && slash != std::string::npos &&
             outputs.count(kv.first.substr(slash + 1));
    });
    for (const auto& [name, t] : s)
      if (!values.count(name))
        return invalid_argument("the merged data holds '" + name + "', which is not a tensor of " +
                                model_path.string() + "; was a file saved from another model?");
  }
  return dropped;
}

}  // namespace

Expected<DataToInputResult> data_to_input(const DataToInputOptions& o) {
  ODB_ASSIGN_OR_RETURN(std::vector<Sample> merged, merge_sample_files(o.paths));
  DataToInputResult r;
  if (!o.model.empty()) {
    ODB_ASSIGN_OR_RETURN(size_t dropped, keep_model_tensors(o.model, merged));
    if (dropped)
      add_note(r.messages, "left out " + std::to_string(dropped) +
                               " tensor(s) named BACKEND/OUTPUT (other backends' outputs)");
  }
  ODB_RETURN_IF_ERROR(save_samples(o.output, merged));
  r.samples = merged.size();
  for (const auto& s : merged) r.tensors += s.size();
  return r;
}

}  // namespace onnxdbg::api
