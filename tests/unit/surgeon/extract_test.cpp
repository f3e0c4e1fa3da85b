// Extract: the subgraph between two tensors with types from shape inference, explicit types,
// and the "would still need" error.
#include <gtest/gtest.h>

#include "surgeon_test_util.h"

namespace onnxdbg::surgeon {
namespace {

using namespace testing;

const char* kExtractModel = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,4,4] x, float[1,3,4,4] z) => (float[1,48] y)
<float[3,1,1] bias = {0.5, -0.5, 1.0}, int64[2] shp = {1, -1}>
{
  a = Relu(x)
  b = Add(a, bias)
  c = Sigmoid(b)
  d = Mul(c, z)
  y = Reshape(d, shp)
})";

TEST(Extract, AutoTypesFromShapeInference) {
  auto original = parse_text_model(kExtractModel);
  auto m = original;
  auto in = parse_extract_tensor("a:auto:auto", false);
  auto out = parse_extract_tensor("c", true);
  ASSERT_TRUE(in.has_value() && out.has_value());
  Status st = extract(m, {*in}, {*out});
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  ASSERT_EQ(m.graph().node_size(), 2);
  EXPECT_EQ(m.graph().node(0).op_type(), "Add");
  ASSERT_EQ(m.graph().input_size(), 1);
  const auto& t = m.graph().input(0).type().tensor_type();
  EXPECT_EQ(t.elem_type(), onnx::TensorProto::FLOAT);
  ASSERT_EQ(t.shape().dim_size(), 4);
  EXPECT_EQ(t.shape().dim(1).dim_value(), 3);
  EXPECT_EQ(m.graph().initializer_size(), 1);  // bias only
  EXPECT_EQ(m.graph().output(0).type().tensor_type().shape().dim_size(), 4);
  expect_lint_clean(m);
  // Same values as the original's intermediate: run the original up to c by extracting from x.
  auto ref = original;
  ASSERT_TRUE(extract(ref, {*parse_extract_tensor("x", false)}, {*out}).is_ok());
  auto a = run_reference(ref, {{"x", ramp({1, 3, 4, 4})}});
  auto relu = ramp({1, 3, 4, 4});
  for (int64_t i = 0; i < relu.numel(); ++i)
    relu.data<float>()[i] = std::max(0.0f, relu.data<float>()[i]);
  auto b = run_reference(m, {{"a", relu}});
  onnxdbg::testing::expect_tensor_near(b.at("c"), a.at("c").shape(),
                                       onnxdbg::testing::values(a.at("c")));
}

TEST(Extract, ExplicitShapeAndDtype) {
  auto m = parse_text_model(kExtractModel);
  auto in = parse_extract_tensor("b:[1,3,?,4]:float32", false);
  ASSERT_TRUE(in.has_value()) << in.status().to_string();
  ASSERT_TRUE(in->shape.has_value());
  EXPECT_EQ(shape_to_string(*in->shape), "1x3x-1x4");
  Status st = extract(m, {*in}, {*parse_extract_tensor("c:float32", true)});
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_EQ(m.graph().node_size(), 1);
  EXPECT_FALSE(m.graph().input(0).type().tensor_type().shape().dim(2).has_dim_value());
  expect_lint_clean(m);
}

TEST(Extract, OutputThatNeedsAnotherInputIsAnError) {
  auto m = parse_text_model(kExtractModel);
  Status st = extract(m, {*parse_extract_tensor("a", false)}, {*parse_extract_tensor("y", true)});
  ASSERT_FALSE(st.is_ok());
  const std::string msg = st.to_string();
  EXPECT_NE(msg.find("output 'y'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("would still need 'z'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("read by node #3 Mul"), std::string::npos) << msg;
}

TEST(Extract, UnknownTensorIsNotFound) {
  auto m = parse_text_model(kExtractModel);
  Status st =
      extract(m, {*parse_extract_tensor("nope", false)}, {*parse_extract_tensor("c", true)});
  EXPECT_EQ(st.code(), ErrorCode::kNotFound);
  EXPECT_FALSE(parse_extract_tensor("x:1x3:floaty", false).has_value());
}

}  // namespace
}  // namespace onnxdbg::surgeon
