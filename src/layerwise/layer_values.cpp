// The reference's value of every main-graph tensor in one run (see layer_values.h).
#include "layerwise/layer_values.h"

#include <set>

#include "core/temp_dir.h"
#include "layerwise/layerwise.h"
#include "layerwise/node_models.h"
#include "model/model.h"
#include "reference/interpreter.h"

namespace onnxdbg {

Expected<TensorMap> reference_layer_values(const LoadedModel& model, const TensorMap& inputs,
                                           uint64_t budget_bytes,
                                           const reference::InterpreterOptions& options) {
  ODB_ASSIGN_OR_RETURN(auto interpreter,
                       reference::Interpreter::create(model.proto, model.base_dir, options));
  TensorMap values;
  uint64_t held = 0;
  std::string over;  // the first tensor that did not fit
  auto hook = [&](const onnx::NodeProto&, size_t, const std::string& name, const Tensor& value) {
    if (!over.empty()) return;
    const uint64_t bytes = value.dtype() == DType::kString ? 0 : value.nbytes();
    if (held + bytes > budget_bytes) {
      over = name;
      values.clear();  // nothing half-kept
      return;
    }
    held += bytes;
    values.insert_or_assign(name, value);  // the interpreter frees its copy after the call
  };
  ODB_ASSIGN_OR_RETURN(auto outputs, interpreter->run(inputs, hook));
  if (!over.empty())
    return invalid_argument("saving every layer needs more than --layerwise-memory " +
                            memory_size_string(budget_bytes) + " (it was full at tensor '" + over +
                            "'); raise it or save without --layerwise");
  for (auto& [name, t] : outputs) values.insert_or_assign(name, std::move(t));
  return values;
}

Expected<TensorMap> backend_layer_values(const LoadedModel& model, Backend& backend,
                                         const TensorMap& inputs, const TensorMap& types) {
  onnx::ModelProto m = model.proto;
  std::set<std::string> outputs;
  for (const auto& o : m.graph().output()) outputs.insert(o.name());
  for (const auto& node : m.graph().node())
    for (const auto& name : node.output())
      if (!name.empty() && types.count(name) && outputs.insert(name).second)
        // Element type only: the backend infers the shape, and a declared one could conflict.
        layerwise_detail::set_tensor_type(m.mutable_graph()->add_output(), name,
                                          types.at(name).dtype(), nullptr);
  ODB_ASSIGN_OR_RETURN(TempDir tmp, TempDir::create("onnxdbg-layers-"));
  const std::filesystem::path path = tmp.path() / "model.onnx";
  ODB_RETURN_IF_ERROR(save_model(m, path));
  m.Clear();
  ODB_ASSIGN_OR_RETURN(auto session, backend.load(path, model.base_dir));
  ODB_ASSIGN_OR_RETURN(SessionRunResult r, session->run(inputs));
  return std::move(r.outputs);
}

}  // namespace onnxdbg
