// `surgeon convert-opset`: ONNX's version converter as lint/fixes.h wraps it (large and external
// weights kept out of its way, its exceptions turned into one sentence), where lint tries it on a
// copy before it suggests the command.
#include "lint/fixes.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {

Status convert_opset(onnx::ModelProto& model, int64_t target) {
  return lint::convert_opset(model, target);
}

Status set_opset(onnx::ModelProto& model, int64_t target) { return lint::set_opset(model, target); }

}  // namespace onnxdbg::surgeon
