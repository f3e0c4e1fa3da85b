// Strategy initializers: set float weights to zero where the failure does not depend on their
// values, so a reader of the reduced model sees which weights matter (shapes are kept: ONNX
// shape inference and the op semantics depend on them).
#include "core/numel.h"
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

Status strategy_initializers(Reducer& r) {
  std::vector<std::string> items;
  for (const auto& t : r.current_built().model.graph().initializer()) {
    const int64_t numel = saturating_numel(t.dims());
    const bool floating =
        t.data_type() == onnx::TensorProto::FLOAT || t.data_type() == onnx::TensorProto::DOUBLE ||
        t.data_type() == onnx::TensorProto::FLOAT16 || t.data_type() == onnx::TensorProto::BFLOAT16;
    if (floating && numel > 1 && !r.current().zeroed_initializers.count(t.name()) &&
        !r.current().frozen_inputs.count(t.name()))
      items.push_back(t.name());
  }
  if (items.empty()) return Status::ok();
  return ddmin_edits<std::string>(
      r, items, [&](Candidate& c, const std::string& item) { c.zeroed_initializers.insert(item); },
      /*try_empty=*/true);
}

}  // namespace onnxdbg::reduce
