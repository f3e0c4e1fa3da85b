// Function bodies on the reference interpreter: ops without a kernel run the body of their ONNX
// schema (static, or context-dependent built from the node's attributes and input types), with
// ref_attr_name attributes bound, the function's own opset imports, and every op nobody can run
// reported at load time.
#include "reference/function_body.h"

#include <gtest/gtest.h>

#include "../test_util.h"
#include "core/onnx.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"

namespace onnxdbg {
namespace {

using reference::op_support;
using reference::OpSupport;
using testing::expect_tensor_near;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;

// Test-only schemas in a domain of their own: ScaleBy (Y = X * alpha, alpha defaulting to 2, its
// body written for opset 13 of the default domain) and Broken (a body that uses an op nobody
// implements).
void register_test_schemas() {
  static const bool once = [] {
    onnx::OpSchemaRegistry::DomainToVersionRange::Instance().AddDomainToVersion("onnxdbg.test", 1,
                                                                                1);
    auto nodes = [](const char* text) {
      onnx::NodeList list;
      onnx::OnnxParser parser(text);
      auto st = parser.Parse(list);
      EXPECT_TRUE(st.IsOK()) << st.ErrorMessage();
      return std::vector<onnx::NodeProto>(list.begin(), list.end());
    };
    onnx::OperatorSetIdProto onnx13;
    onnx13.set_domain("");
    onnx13.set_version(13);
    onnx::OpSchema scale;
    scale.SetName("ScaleBy")
        .SetDomain("onnxdbg.test")
        .SinceVersion(1)
        .Input(0, "X", "input", "T")
        .Output(0, "Y", "X * alpha", "T")
        .Attr("alpha", "factor", onnx::AttributeProto::FLOAT, 2.0f)
        .TypeConstraint("T", {"tensor(float)"}, "float tensors")
        .FunctionBody(nodes(R"ONNX({
          a = Constant <value_float : float = @alpha> ()
          Y = Mul (X, a)
        })ONNX"),
                      {onnx13});
    onnx::RegisterSchema(scale);
    onnx::OpSchema broken;
    broken.SetName("Broken")
        .SetDomain("onnxdbg.test")
        .SinceVersion(1)
        .Input(0, "X", "input", "T")
        .Output(0, "Y", "output", "T")
        .TypeConstraint("T", {"tensor(float)"}, "float tensors")
        .FunctionBody(nodes("{ Y = NoSuchOp (X) }"), {onnx13});
    onnx::RegisterSchema(broken);
    onnx::OpSchema take;
    take.SetName("TakeAt")
        .SetDomain("onnxdbg.test")
        .SinceVersion(1)
        .Input(0, "X", "data", "T")
        .Input(1, "I", "indices", "tensor(int64)")
        .Output(0, "Y", "X[I]", "T")
        .TypeConstraint("T", {"tensor(float)"}, "float tensors")
        .FunctionBody(nodes("{ Y = Gather (X, I) }"), {onnx13});
    onnx::RegisterSchema(take);
    return true;
  }();
  (void)once;
}

TEST(FunctionBody, OpSupportPrefersKernels) {
  EXPECT_EQ(op_support("", "Add", 14), OpSupport::kKernel);
  EXPECT_EQ(op_support("ai.onnx", "Add", 14), OpSupport::kKernel);
  // Softmax-13 and Celu-12 have bodies too; the kernel wins.
  EXPECT_EQ(op_support("", "Softmax", 13), OpSupport::kKernel);
  EXPECT_EQ(op_support("", "Celu", 12), OpSupport::kKernel);
  // Both have function bodies in ONNX 1.12 and kernels of ours: the kernel wins.
  EXPECT_EQ(op_support("", "NegativeLogLikelihoodLoss", 13), OpSupport::kKernel);
  EXPECT_EQ(op_support("", "HannWindow", 17), OpSupport::kKernel);
  // HannWindow exists from opset 17 only; NoSuchOp nowhere.
  EXPECT_EQ(op_support("", "HannWindow", 16), OpSupport::kNone);
  EXPECT_EQ(op_support("", "NoSuchOp", 17), OpSupport::kNone);
  register_test_schemas();
  EXPECT_EQ(op_support("onnxdbg.test", "ScaleBy", 1), OpSupport::kFunctionBody);
  EXPECT_EQ(op_support("onnxdbg.test", "Broken", 1), OpSupport::kNone);
}

TEST(FunctionBody, ContextDependentBodyUsesAttributesAndInputs) {
  // NegativeLogLikelihoodLoss-13: loss = -x[n, t[n]], averaged (mean) or weighted.
  const Tensor x = Tensor::from_vector<float>({2, 3}, {-1, -2, -3, -4, -5, -6});
  const Tensor t = Tensor::from_vector<int64_t>({2}, {0, 2});
  auto mean = run_reference(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x, int64[2] t) => (float y) { y = NegativeLogLikelihoodLoss(x, t) })"),
                            {{"x", x}, {"t", t}});
  expect_tensor_near(mean["y"], {}, {(1 + 6) / 2.0});
  auto weighted =
      run_reference(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x, int64[2] t, float[3] w) => (float[2] y) {
      y = NegativeLogLikelihoodLoss<reduction = "none">(x, t, w)
    })"),
                    {{"x", x}, {"t", t}, {"w", Tensor::from_vector<float>({3}, {0.5, 1, 2})}});
  expect_tensor_near(weighted["y"], {2}, {0.5, 12});
}

TEST(FunctionBody, StaticBodyWithAttributeReferences) {
  // HannWindow-17: 0.5 - 0.5 cos(2 pi k / N), N = size (periodic) or size - 1 (symmetric).
  const Tensor n = Tensor::scalar<int64_t>(4);
  auto periodic = run_reference(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64 n) => (float[4] y) { y = HannWindow(n) })"),
                                {{"n", n}});
  expect_tensor_near(periodic["y"], {4}, {0, 0.5, 1, 0.5}, 1e-6);
  auto symmetric = run_reference(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64 n) => (double[4] y) { y = HannWindow<periodic = 0, output_datatype = 11>(n) })"),
                                 {{"n", n}});
  ASSERT_EQ(symmetric["y"].dtype(), DType::kDouble);
  expect_tensor_near(symmetric["y"], {4}, {0, 0.75, 0.75, 0}, 1e-6);  // computed in float32
}

TEST(FunctionBody, BindsAttributesAndUsesTheFunctionsOpsets) {
  register_test_schemas();
  // The model imports opset 17; the body's Constant/Mul run at the opset 13 it was written for.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17, "onnxdbg.test" : 1]>
    g (float[2] x) => (float[2] d, float[2] s) {
      d = onnxdbg.test.ScaleBy(x)
      s = onnxdbg.test.ScaleBy<alpha = 3.0>(x)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({2}, {1, -2})}});
  expect_tensor_near(out["d"], {2}, {2, -4});
  expect_tensor_near(out["s"], {2}, {3, -6});
}

TEST(FunctionBody, ReportsEveryOpWithoutKernelOrBodyAtLoad) {
  register_test_schemas();
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17, "onnxdbg.test" : 1]>
    g (float[2] x) => (float[2] y, float[2] z, float[2] w) {
      y = onnxdbg.test.Broken(x)
      z = Frobnicate(x)
      w = onnxdbg.test.ScaleBy(x)
    })");
  const auto missing = reference::find_missing_kernels(m);
  ASSERT_EQ(missing.size(), 2u);
  auto in = reference::Interpreter::create(m);
  ASSERT_FALSE(in.has_value());
  EXPECT_EQ(in.status().code(), ErrorCode::kUnsupported);
  const std::string msg = in.status().to_string();
  EXPECT_NE(msg.find("Broken (domain onnxdbg.test) at opset 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Frobnicate at opset 17"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("ScaleBy"), std::string::npos) << msg;
}

TEST(FunctionBody, ErrorsInsideTheBodyNameTheCallingNode) {
  register_test_schemas();
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13, "onnxdbg.test" : 1]>
    g (float[3] x, int64[2] i) => (float[2] y) { y = onnxdbg.test.TakeAt(x, i) })");
  const std::string msg =
      run_reference_error(m, {{"x", Tensor::from_vector<float>({3}, {1, 2, 3})},
                              {"i", Tensor::from_vector<int64_t>({2}, {0, 7})}});
  EXPECT_NE(msg.find("function body of TakeAt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(TakeAt) of graph 'g'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace onnxdbg
