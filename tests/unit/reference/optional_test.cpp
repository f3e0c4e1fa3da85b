// Optionals on the reference interpreter: Optional, OptionalHasElement and OptionalGetElement,
// optionals holding tensors or sequences, empty optionals as graph inputs and outputs, Identity
// and If passing optionals, and errors for values of the wrong kind. (ONNX 1.12's text parser
// cannot write optional(...) in a graph signature: such names are untyped or declared apart.)
#include <gtest/gtest.h>

#include "../test_util.h"
#include "ops/op_test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::f32;
using testing::parse_text_model;
using testing::run_reference_values;
using testing::run_reference_values_error;

// Gives node `index` of the main graph the TYPE_PROTO attribute `type` = tensor(float), which the
// text format cannot write.
void set_float_type_attr(onnx::ModelProto& m, int index) {
  auto* a = m.mutable_graph()->mutable_node(index)->add_attribute();
  a->set_name("type");
  a->set_type(onnx::AttributeProto::TYPE_PROTO);
  a->mutable_tp()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

TEST(Optional, WrapTestAndUnwrap) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[2] x) => (bool full, bool empty, float[2] y, none, some) {
      none = Optional()
      some = Optional(x)
      full = OptionalHasElement(some)
      empty = OptionalHasElement(none)
      y = OptionalGetElement(some)
    })");
  set_float_type_attr(m, 0);
  auto out = run_reference_values(m, {{"x", f32({2}, {1, 2})}});
  expect_tensor_near(out["full"].tensor(), {}, {1});
  expect_tensor_near(out["empty"].tensor(), {}, {0});
  expect_tensor_near(out["y"].tensor(), {2}, {1, 2});
  ASSERT_TRUE(out["none"].is_optional());
  EXPECT_FALSE(out["none"].has_element());
  EXPECT_EQ(out["none"].describe(), "empty optional");
  ASSERT_TRUE(out["some"].has_element());
  EXPECT_EQ(out["some"].describe(), "optional holding float32[2]");
}

TEST(Optional, HoldsSequencesAndPassesThroughIdentityAndIf) {
  const auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (bool c, float[1] x, in) => (chosen, same, bool had) {
      s = SequenceConstruct(x, x)
      wrapped = Optional(s)
      chosen = If(c) <
        then_branch = t () => (o) { o = Identity(wrapped) },
        else_branch = e () => (o) { o = Identity(in) }
      >
      same = Identity(in)
      had = OptionalHasElement(in)
    })");
  auto out = run_reference_values(
      m, {{"c", Tensor::scalar<bool>(true)}, {"x", f32({1}, {4})}, {"in", Value::none()}});
  ASSERT_TRUE(out["chosen"].has_element());
  ASSERT_TRUE(out["chosen"].element().is_sequence());
  EXPECT_EQ(out["chosen"].element().sequence().tensors.size(), 2u);
  EXPECT_TRUE(out["same"].is_optional());
  EXPECT_FALSE(out["same"].has_element());
  expect_tensor_near(out["had"].tensor(), {}, {0});
  out = run_reference_values(
      m, {{"c", Tensor::scalar<bool>(false)},
          {"x", f32({1}, {4})},
          {"in", Value::optional_of(testing::sequence_of(DType::kFloat, {f32({1}, {9})}))}});
  ASSERT_TRUE(out["chosen"].has_element());
  expect_tensor_near(out["chosen"].element().sequence().tensors.at(0), {1}, {9});
  expect_tensor_near(out["had"].tensor(), {}, {1});
}

TEST(Optional, Errors) {
  auto empty = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (o) => (float[2] y) { y = OptionalGetElement(o) })");
  testing::declare_type(empty, "o", "optional(float[])");
  std::string msg = run_reference_values_error(empty, {{"o", Value::none()}});
  EXPECT_NE(msg.find("the optional input is empty"), std::string::npos) << msg;
  msg = run_reference_values_error(empty, {{"o", f32({2}, {1, 2})}});
  EXPECT_NE(msg.find("graph input 'o' is declared as an optional but was given a tensor"),
            std::string::npos)
      << msg;
  auto has = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2] x) => (bool y) { y = OptionalHasElement(x) })");
  has.mutable_graph()->mutable_node(0)->set_name("has");
  msg = run_reference_values_error(has, {{"x", f32({2}, {1, 2})}});
  EXPECT_NE(
      msg.find("OptionalHasElement of node 'has' expects an optional as input 0, got a tensor"),
      std::string::npos)
      << msg;
  auto nested = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (o) => (y) { y = Optional(o) })");
  msg = run_reference_values_error(nested, {{"o", Value::none()}});
  EXPECT_NE(msg.find("expects a tensor or a sequence as input 0, got an optional"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace onnxdbg
