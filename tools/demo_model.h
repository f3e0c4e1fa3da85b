// The demo model in ONNX text format, shared by tools/make_demo_model.cpp (what `make demo` runs)
// and the tests that run it (tests/unit/test_util.h), so the two cannot drift apart.
#pragma once

namespace onnxdbg::demo {

/// MatMul, Relu and a Softmax at opset 13 without an axis attribute (so axis -1, ONNX 13) on
/// float[1,3,4] x, with outputs 'probs' and 'scaled' (Relu's output times a Constant 2). OpenCV
/// 4.6 still applies Softmax's pre-13 default axis 1, so it disagrees on 'probs'.
inline const char* model_text() {
  return R"ONNX(
<ir_version: 8, opset_import: ["" : 13], producer_name: "onnxdbg make-demo-model">
demo_softmax (float[1,3,4] x) => (float[1,3,4] probs, float[1,3,4] scaled)
<float[4,4] w = {0.5, -0.25, 0.0, 1.0, 0.75, 0.5, -1.0, 0.25, -0.5, 1.0, 0.5, 0.0, 0.25, 0.0, 0.75, -0.5}>
{
  proj = MatMul(x, w)
  act = Relu(proj)
  probs = Softmax(act)
  two = Constant<value = float {2.0}>()
  scaled = Mul(act, two)
}
)ONNX";
}

}  // namespace onnxdbg::demo
