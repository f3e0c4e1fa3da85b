// The reference's value of every main-graph tensor in one run (see layer_values.h).
#include "layerwise/layer_values.h"

#include "layerwise/layerwise.h"
#include "model/model.h"
#include "reference/interpreter.h"

namespace onnxdbg {

Expected<TensorMap> reference_layer_values(const std::filesystem::path& model_path,
                                           const TensorMap& inputs, uint64_t budget_bytes,
                                           const reference::InterpreterOptions& options) {
  ODB_ASSIGN_OR_RETURN(LoadedModel model, load_model(model_path));
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

}  // namespace onnxdbg
