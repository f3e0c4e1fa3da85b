// The OpenCV DNN backend through the worker: values, output reshaping to declared shapes,
// non-float inputs, OpenCV's own error text, and agreement with ONNX Runtime on real models
// (from $ONNXDBG_MODELS, skipped when absent).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "backend_test_util.h"

namespace onnxdbg {
namespace {

using testing::isolated;
using testing::ModelDir;

TEST(OpenCv, ComputesKnownValues) {
  ModelDir dir;
  const auto model = dir.write_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3] x) => (float[1,2] y)
<float[3,2] w = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, float[2] b = {0.5, -100.0}>
{
  m = MatMul(x, w)
  a = Add(m, b)
  y = Relu(a)
}
)");
  auto session = isolated("opencv")->load(model);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  EXPECT_EQ((*session)->info().output_names, std::vector<std::string>{"y"});
  auto out = (*session)->run({{"x", Tensor::from_vector<float>({1, 3}, {1, 1, 1})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  testing::expect_tensor_near(out->outputs.at("y"), {1, 2}, {9.5, 0});
}

TEST(OpenCv, ConvAndTwoOutputs) {
  ModelDir dir;
  const auto model = dir.write_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,3,3] x) => (float[1,1,2,2] c, float[1,1,3,3] s)
<float[1,1,2,2] w = {1.0, 1.0, 1.0, 1.0}>
{
  c = Conv <kernel_shape = [2, 2]> (x, w)
  s = Sigmoid(x)
}
)");
  auto session = isolated("opencv")->load(model);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto out = (*session)->run(
      {{"x", Tensor::from_vector<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  testing::expect_tensor_near(out->outputs.at("c"), {1, 1, 2, 2}, {12, 16, 24, 28});
  std::vector<double> sig;
  for (int i = 1; i <= 9; ++i) sig.push_back(1 / (1 + std::exp(-i)));
  testing::expect_tensor_near(out->outputs.at("s"), {1, 1, 3, 3}, sig, 1e-5);
}

TEST(OpenCv, OneDimensionalOutputKeepsTheDeclaredShape) {
  ModelDir dir;
  const auto model = dir.write_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4] x) => (float[4] y) {
  y = Relu(x)
}
)");
  auto session = isolated("opencv")->load(model);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto out = (*session)->run({{"x", Tensor::from_vector<float>({4}, {-1, 2, -3, 4})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  testing::expect_tensor_near(out->outputs.at("y"), {4}, {0, 2, 0, 4});
}

TEST(OpenCv, NonFloatInputsAreConvertedWithAWarning) {
  ModelDir dir;
  const auto model = dir.write_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (double[1,2] x) => (double[1,2] y) {
  y = Relu(x)
}
)");
  auto session = isolated("opencv")->load(model);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  const auto& warnings = (*session)->info().warnings;
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("float32"), std::string::npos) << warnings[0];
  auto out = (*session)->run({{"x", Tensor::from_vector<double>({1, 2}, {-1.5, 2.5})}});
  if (!out.has_value()) {
    // OpenCV 4.6 may refuse double graphs outright; then its own message must come back.
    EXPECT_EQ(out.status().code(), ErrorCode::kBackendError);
    EXPECT_NE(out.status().message().find("OpenCV"), std::string::npos) << out.status().message();
    return;
  }
  testing::expect_tensor_near(out->outputs.at("y"), {1, 2}, {0, 2.5});
}

TEST(OpenCv, SymbolicInputDimsAreFixedAtRunTime) {
  // OpenCV 4.6 refuses Shape of an input with a symbolic dim; the backend re-imports the model
  // with the dims of the inputs it is given, and again when they change.
  ModelDir dir;
  const auto model = dir.write_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[N,2] x) => (float[N,2] y) {
  s = Shape(x)
  r = Reshape(x, s)
  y = Relu(r)
}
)");
  auto session = isolated("opencv")->load(model);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  const auto& warnings = (*session)->info().warnings;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("imported at run time"), std::string::npos) << warnings[0];
  for (int64_t n : {1, 3, 3}) {
    std::vector<float> x;
    std::vector<double> want;
    for (int64_t i = 0; i < 2 * n; ++i) {
      x.push_back(static_cast<float>(i % 2 ? i : -i));
      want.push_back(i % 2 ? static_cast<double>(i) : 0.0);
    }
    auto out = (*session)->run({{"x", Tensor::from_vector<float>({n, 2}, x)}});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    testing::expect_tensor_near(out->outputs.at("y"), {n, 2}, want);
  }
}

TEST(OpenCv, StringInputsAreRefused) {
  ModelDir dir;
  const auto model = dir.write_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  y = Relu(x)
}
)");
  auto session = isolated("opencv")->load(model);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto out = (*session)->run({{"x", Tensor::from_vector<std::string>({2}, {"a", "b"})}});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), ErrorCode::kUnsupported);
}

TEST(OpenCv, UnreadableModelGivesOpenCvsMessage) {
  ModelDir dir;
  const auto path = dir.path() / "garbage.onnx";
  {
    std::ofstream f(path);
    f << "this is not a protobuf";
  }
  auto session = isolated("opencv")->load(path);
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), ErrorCode::kBackendError);
  EXPECT_EQ(session.status().message().rfind("OpenCV: ", 0), 0u) << session.status().message();
}

/// Fills `sig`'s shape (symbolic dims become 1) with a smooth deterministic pattern.
Tensor pattern_input(const ValueSignature& sig) {
  Shape shape = sig.shape;
  for (auto& d : shape) d = d < 0 ? 1 : d;
  Tensor t(DType::kFloat, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_from_double(i, 0.5 * std::sin(0.01 * static_cast<double>(i)));
  return t;
}

class RealModel : public ::testing::TestWithParam<const char*> {};

// OpenCV 4.6 refuses many real models (dynamic shapes, missing attributes); then the refusal must
// be OpenCV's own message. When it runs the model, it must agree with ORT.
TEST_P(RealModel, OpenCvAgreesWithOnnxRuntimeOrExplainsWhyNot) {
  const char* dir = std::getenv("ONNXDBG_MODELS");
  if (!dir) GTEST_SKIP() << "ONNXDBG_MODELS is not set";
  const std::filesystem::path path = std::filesystem::path(dir) / GetParam();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  auto model = load_model(path);
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  TensorMap inputs;
  for (const auto& sig : model_inputs(model->proto.graph())) {
    ASSERT_EQ(sig.dtype, DType::kFloat) << sig.name;
    inputs[sig.name] = pattern_input(sig);
  }
  auto ort = isolated("onnxruntime")->load(path);
  ASSERT_TRUE(ort.has_value()) << ort.status().to_string();
  auto a = (*ort)->run(inputs);
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  for (const auto& [name, t] : a->outputs) {
    for (int64_t i = 0; i < t.numel(); ++i) ASSERT_TRUE(std::isfinite(t.get_as_double(i))) << name;
  }

  auto cv = isolated("opencv")->load(path);
  if (!cv.has_value()) {
    EXPECT_EQ(cv.status().code(), ErrorCode::kBackendError);
    EXPECT_EQ(cv.status().message().rfind("OpenCV: ", 0), 0u) << cv.status().message();
    std::cout << "OpenCV refuses " << GetParam() << " (checked): " << cv.status().message() << "\n";
    return;
  }
  auto b = (*cv)->run(inputs);
  if (!b.has_value()) {
    EXPECT_EQ(b.status().code(), ErrorCode::kBackendError);
    EXPECT_EQ(b.status().message().rfind("OpenCV: ", 0), 0u) << b.status().message();
    std::cout << "OpenCV refuses " << GetParam() << " (checked): " << b.status().message() << "\n";
    return;
  }
  ASSERT_EQ(a->outputs.size(), b->outputs.size());
  for (const auto& [name, ta] : a->outputs) {
    const Tensor& tb = b->outputs.at(name);
    ASSERT_EQ(ta.shape(), tb.shape()) << name;
    double scale = 0;
    for (int64_t i = 0; i < ta.numel(); ++i) scale = std::max(scale, std::abs(ta.get_as_double(i)));
    for (int64_t i = 0; i < ta.numel(); ++i) {
      ASSERT_NEAR(tb.get_as_double(i), ta.get_as_double(i), 1e-3 * (1 + scale))
          << name << "[" << i << "]";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, RealModel,
                         ::testing::Values("ch_ppocr_mobile_v2.0_cls_infer.onnx",
                                           "embedding_model.onnx", "hey_jarvis_v0.1.onnx"));

}  // namespace
}  // namespace onnxdbg
