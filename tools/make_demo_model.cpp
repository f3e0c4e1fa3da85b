// make-demo-model OUT.onnx: writes the model `make demo` runs, generated from ONNX text here so
// the project ships no binary. Softmax at opset 13 on a rank-3 tensor without an axis attribute
// means axis -1 (ONNX 13); OpenCV 4.6 still applies the pre-13 default (axis 1), so the backends
// really disagree on it.
#include <iostream>

#include "core/onnx.h"
#include "demo_model.h"
#include "model/model.h"
#include "onnx/defs/parser.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make-demo-model OUT.onnx\n";
    return 2;
  }
  const char* text = onnxdbg::demo::model_text();
  onnx::ModelProto model;
  onnx::OnnxParser parser(text);
  auto st = parser.Parse(model);
  if (!st.IsOK()) {
    std::cerr << "make-demo-model: " << st.ErrorMessage() << "\n";
    return 1;
  }
  auto saved = onnxdbg::save_model(model, argv[1]);
  if (!saved) {
    std::cerr << "make-demo-model: " << saved.to_string() << "\n";
    return 1;
  }
  return 0;
}
