// Pad on the reference interpreter: constant, reflect, edge and wrap modes, the attribute form of
// opset 2, negative pads, and error messages.
#include "../../test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;

Tensor row(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>({n}, v);
}

TEST(Pad, Reflect1D) {
  // reflect mirrors without repeating the edge; pads larger than size-1 keep mirroring.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3] x) => (float[10] y) {
      pads = Constant<value = int64[2] {5, 2}>()
      y = Pad<mode = "reflect">(x, pads)
    })");
  auto out = run_reference(m, {{"x", row({1, 2, 3})}});
  expect_tensor_near(out["y"], {10}, {2, 1, 2, 3, 2, 1, 2, 3, 2, 1});
}

TEST(Pad, Reflect2DSpecExample) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (float[3,2] x) => (float[3,4] y) {
      pads = Constant<value = int64[4] {0, 2, 0, 0}>()
      y = Pad<mode = "reflect">(x, pads)
    })");
  auto out = run_reference(
      m, {{"x", Tensor::from_vector<float>({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f})}});
  expect_tensor_near(out["y"], {3, 4},
                     {1.0, 1.2, 1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7});
}

TEST(Pad, EdgeAndConstantValue) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,2] x) => (float[3,4] e, float[3,4] c) {
      pads = Constant<value = int64[4] {1, 1, 0, 1}>()
      v = Constant<value = float {9.5}>()
      e = Pad<mode = "edge">(x, pads)
      c = Pad(x, pads, v)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}});
  expect_tensor_near(out["e"], {3, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4});
  expect_tensor_near(out["c"], {3, 4}, {9.5, 9.5, 9.5, 9.5, 9.5, 1, 2, 9.5, 9.5, 3, 4, 9.5});
}

TEST(Pad, NegativePadsCropThenReflect) {
  // Crop one element at the start ([2, 3, 4]) then reflect two at the end.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x) => (float[5] y) {
      pads = Constant<value = int64[2] {-1, 2}>()
      y = Pad<mode = "reflect">(x, pads)
    })");
  auto out = run_reference(m, {{"x", row({1, 2, 3, 4})}});
  expect_tensor_near(out["y"], {5}, {2, 3, 4, 3, 2});
}

TEST(Pad, Opset2AttributeForm) {
  auto m = parse_text_model(R"(
    <ir_version: 3, opset_import: ["" : 2]>
    g (float[2] x) => (float[5] y) {
      y = Pad<pads = [2, 1], value = -1.0>(x)
    })");
  auto out = run_reference(m, {{"x", row({5, 6})}});
  expect_tensor_near(out["y"], {5}, {-1, -1, 5, 6, -1});
}

TEST(Pad, WrapAndAxesAtOpset19) {
  auto m = parse_text_model(R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float[2,3] x) => (float[2,6] y) {
      pads = Constant<value = int64[2] {2, 1}>()
      axes = Constant<value = int64[1] {-1}>()
      y = Pad<mode = "wrap">(x, pads, , axes)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  expect_tensor_near(out["y"], {2, 6}, {2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4});
}

TEST(Pad, StringsAndInt64) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int64[2] x) => (int64[4] y) {
      pads = Constant<value = int64[2] {1, 1}>()
      y = Pad<mode = "edge">(x, pads)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<int64_t>({2}, {7, 8})}});
  expect_tensor_near(out["y"], {4}, {7, 7, 8, 8});
}

TEST(Pad, WrongPadsLengthNamesShape) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,2] x) => (float[2,4] y) {
      pads = Constant<value = int64[2] {1, 1}>()
      y = Pad(x, pads)
    })");
  const std::string err =
      run_reference_error(m, {{"x", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}});
  EXPECT_NE(err.find("[1, 1]"), std::string::npos) << err;
  EXPECT_NE(err.find("2x2"), std::string::npos) << err;
}

TEST(Pad, ReflectOnEmptyAxisIsAnError) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[0] x) => (float[2] y) {
      pads = Constant<value = int64[2] {1, 1}>()
      y = Pad<mode = "reflect">(x, pads)
    })");
  const std::string err = run_reference_error(m, {{"x", Tensor(DType::kFloat, {0})}});
  EXPECT_NE(err.find("no elements"), std::string::npos) << err;
}

}  // namespace
}  // namespace onnxdbg
