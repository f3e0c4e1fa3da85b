// Sequences on the reference interpreter: the Sequence* kernels, SplitToSequence,
// ConcatFromSequence and SequenceMap, sequences through Identity, If and Loop, graph inputs and
// outputs holding sequences, test data in SequenceProto files, and errors for values of the wrong
// kind. (ONNX 1.12's text parser cannot write seq(...) in a graph signature: those names are
// left untyped, or typed with testing::declare_type.)
#include <gtest/gtest.h>

#include <filesystem>

#include "../test_util.h"
#include "backends/backend.h"
#include "data/test_data.h"
#include "ops/op_test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::f32;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;
using testing::run_reference_values;
using testing::run_reference_values_error;

// Expects `v` to be a sequence of tensors with these shapes and values.
void expect_sequence(const Value& v, const std::vector<Shape>& shapes,
                     const std::vector<std::vector<double>>& values) {
  ASSERT_TRUE(v.is_sequence()) << v.describe();
  const auto& ts = v.sequence().tensors;
  ASSERT_EQ(ts.size(), shapes.size()) << v.describe();
  for (size_t i = 0; i < ts.size(); ++i) expect_tensor_near(ts[i], shapes[i], values[i]);
}

TEST(Sequence, ConstructAtLength) {
  auto out = run_reference(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[2] a, float[3] b) => (float[N] first, float[N] last, int64 n) {
      s = SequenceConstruct(a, b)
      zero = Constant<value = int64 {0}>()
      minus_one = Constant<value = int32 {-1}>()
      first = SequenceAt(s, zero)
      last = SequenceAt(s, minus_one)
      n = SequenceLength(s)
    })"),
                           {{"a", f32({2}, {1, 2})}, {"b", f32({3}, {3, 4, 5})}});
  expect_tensor_near(out["first"], {2}, {1, 2});
  expect_tensor_near(out["last"], {3}, {3, 4, 5});
  ASSERT_EQ(out["n"].dtype(), DType::kInt64);
  expect_tensor_near(out["n"], {}, {2});
}

TEST(Sequence, InsertEraseAndSequenceOutputs) {
  auto out =
      run_reference_values(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[1] a, float[1] b, float[1] c) => (appended, front, erased, erased_first) {
      s = SequenceConstruct(a, b)
      zero = Constant<value = int64 {0}>()
      appended = SequenceInsert(s, c)
      front = SequenceInsert(s, c, zero)
      erased = SequenceErase(appended)
      erased_first = SequenceErase(appended, zero)
    })"),
                           {{"a", f32({1}, {1})}, {"b", f32({1}, {2})}, {"c", f32({1}, {3})}});
  expect_sequence(out["appended"], {{1}, {1}, {1}}, {{1}, {2}, {3}});
  expect_sequence(out["front"], {{1}, {1}, {1}}, {{3}, {1}, {2}});
  expect_sequence(out["erased"], {{1}, {1}}, {{1}, {2}});
  expect_sequence(out["erased_first"], {{1}, {1}}, {{2}, {3}});
  EXPECT_EQ(out["front"].describe(), "sequence of 3 float32 tensors");
}

TEST(Sequence, EmptySequenceKeepsItsElementType) {
  const auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (int32[2] x) => (s, int64 n) {
      e = SequenceEmpty<dtype = 6>()
      n = SequenceLength(e)
      s = SequenceInsert(e, x)
    })");
  auto out = run_reference_values(m, {{"x", Tensor::from_vector<int32_t>({2}, {7, 8})}});
  expect_sequence(out["s"], {{2}}, {{7, 8}});
  EXPECT_EQ(out["s"].sequence().elem_type, DType::kInt32);
  expect_tensor_near(out["n"].tensor(), {}, {0});
  const std::string msg = run_reference_values_error(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[2] x) => (s) {
      e = SequenceEmpty<dtype = 6>()
      s = SequenceInsert(e, x)
    })"),
                                                     {{"x", f32({2}, {1, 2})}});
  EXPECT_NE(msg.find("a float32 tensor cannot join a sequence of int32 tensors"), std::string::npos)
      << msg;
}

TEST(Sequence, SplitToSequence) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = run_reference_values(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[2,3] x) => (ones, squeezed, chunks, parts) {
      two = Constant<value = int64 {2}>()
      sizes = Constant<value = int64[2] {1, 2}>()
      ones = SplitToSequence<axis = 1>(x)
      squeezed = SplitToSequence<axis = 0, keepdims = 0>(x)
      chunks = SplitToSequence<axis = 1>(x, two)
      parts = SplitToSequence<axis = -1>(x, sizes)
    })"),
                                  {{"x", x}});
  expect_sequence(out["ones"], {{2, 1}, {2, 1}, {2, 1}}, {{1, 4}, {2, 5}, {3, 6}});
  expect_sequence(out["squeezed"], {{3}, {3}}, {{1, 2, 3}, {4, 5, 6}});
  expect_sequence(out["chunks"], {{2, 2}, {2, 1}}, {{1, 2, 4, 5}, {3, 6}});
  expect_sequence(out["parts"], {{2, 1}, {2, 2}}, {{1, 4}, {2, 3, 5, 6}});
}

TEST(Sequence, ConcatFromSequence) {
  auto out = run_reference(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[1,2] a, float[1,2] b) => (float[2,2] cat0, float[1,4] cat1, float[1,2,2] stack1, float[1,2,2] stack_last) {
      s = SequenceConstruct(a, b)
      cat0 = ConcatFromSequence<axis = 0>(s)
      cat1 = ConcatFromSequence<axis = -1>(s)
      stack1 = ConcatFromSequence<axis = 1, new_axis = 1>(s)
      stack_last = ConcatFromSequence<axis = -1, new_axis = 1>(s)
    })"),
                           {{"a", f32({1, 2}, {1, 2})}, {"b", f32({1, 2}, {3, 4})}});
  expect_tensor_near(out["cat0"], {2, 2}, {1, 2, 3, 4});
  expect_tensor_near(out["cat1"], {1, 4}, {1, 2, 3, 4});
  expect_tensor_near(out["stack1"], {1, 2, 2}, {1, 2, 3, 4});
  expect_tensor_near(out["stack_last"], {1, 2, 2}, {1, 3, 2, 4});
}

TEST(Sequence, SequenceMapWithSequenceAndTensorInputs) {
  const auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (xs, ys, float[1] bias) => (sums, shapes) {
      sums, shapes = SequenceMap(xs, ys, bias) <
        body = f (float[N] x, float[N] y, float[1] b) => (float[N] s, int64[1] shape) {
          t = Add(x, y)
          s = Add(t, b)
          shape = Shape(x)
        }
      >
    })");
  auto out = run_reference_values(
      m, {{"xs", testing::sequence_of(DType::kFloat, {f32({1}, {1}), f32({2}, {2, 3})})},
          {"ys", testing::sequence_of(DType::kFloat, {f32({1}, {10}), f32({2}, {20, 30})})},
          {"bias", f32({1}, {100})}});
  expect_sequence(out["sums"], {{1}, {2}}, {{111}, {122, 133}});
  expect_sequence(out["shapes"], {{1}, {1}}, {{1}, {2}});
  const std::string msg =
      run_reference_values_error(m, {{"xs", testing::sequence_of(DType::kFloat, {f32({1}, {1})})},
                                     {"ys", testing::sequence_of(DType::kFloat, {})},
                                     {"bias", f32({1}, {100})}});
  EXPECT_NE(msg.find("input 1 is a sequence of 0 tensors but input 0 has 1"), std::string::npos)
      << msg;
}

TEST(Sequence, IdentityIfAndLoopPassSequences) {
  // Loop-13 growing a loop-carried sequence, If-13 choosing between sequences, Identity-14.
  const auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (int64 n, bool c, float[1] x) => (grown, chosen, same) {
      empty = SequenceEmpty()
      grown = Loop(n, , empty) <
        body = b (int64 i, bool cond, acc) => (bool cond_out, acc_out) {
          cond_out = Identity(cond)
          fi = Cast<to = 1>(i)
          v = Add(x, fi)
          acc_out = SequenceInsert(acc, v)
        }
      >
      chosen = If(c) <
        then_branch = t () => (s) { s = SequenceConstruct(x, x) },
        else_branch = e () => (s) { s = Identity(grown) }
      >
      same = Identity(chosen)
    })");
  const Tensor x = f32({1}, {10});
  auto out = run_reference_values(
      m, {{"n", Tensor::scalar<int64_t>(3)}, {"c", Tensor::scalar<bool>(false)}, {"x", x}});
  expect_sequence(out["grown"], {{1}, {1}, {1}}, {{10}, {11}, {12}});
  expect_sequence(out["same"], {{1}, {1}, {1}}, {{10}, {11}, {12}});
  out = run_reference_values(
      m, {{"n", Tensor::scalar<int64_t>(0)}, {"c", Tensor::scalar<bool>(true)}, {"x", x}});
  expect_sequence(out["grown"], {}, {});
  expect_sequence(out["chosen"], {{1}, {1}}, {{10}, {10}});
}

TEST(Sequence, WrongValueKindsAreNamed) {
  auto at = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[2] x) => (float[2] y) {
      zero = Constant<value = int64 {0}>()
      y = SequenceAt(x, zero)
    })");
  at.mutable_graph()->mutable_node(1)->set_name("at");
  std::string msg = run_reference_error(at, {{"x", f32({2}, {1, 2})}});
  EXPECT_NE(msg.find("SequenceAt of node 'at' expects a sequence as input 0, got a tensor"),
            std::string::npos)
      << msg;
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[2] x) => (float[2] y) {
      s = SequenceConstruct(x)
      y = Add(s, x)
    })");
  m.mutable_graph()->mutable_node(1)->set_name("add");
  msg = run_reference_error(m, {{"x", f32({2}, {1, 2})}});
  EXPECT_NE(msg.find("Add of node 'add' expects a tensor as input 0, got a sequence"),
            std::string::npos)
      << msg;
  msg = run_reference_error(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 12]>
    g (float[2] x) => (float[2] y) {
      s = SequenceConstruct(x)
      two = Constant<value = int64 {2}>()
      y = SequenceAt(s, two)
    })"),
                            {{"x", f32({2}, {1, 2})}});
  EXPECT_NE(msg.find("position 2 is out of range for a sequence of 1 tensors (valid: -1 to 0)"),
            std::string::npos)
      << msg;
}

TEST(Sequence, GraphInputsAndOutputsOfSequenceKind) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (s) => (t) { t = Identity(s) })");
  testing::declare_type(m, "s", "seq(float[])");
  std::string msg = run_reference_values_error(m, {{"s", f32({1}, {1})}});
  EXPECT_NE(msg.find("graph input 's' is declared as a sequence but was given a tensor"),
            std::string::npos)
      << msg;
  // The tensor-only run() cannot hand back a sequence.
  auto in = reference::Interpreter::create(parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[1] x) => (t) { t = SequenceConstruct(x) })"));
  ASSERT_TRUE(in.has_value());
  auto r = (*in)->run({{"x", f32({1}, {1})}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.status().to_string().find("graph output 't' is a sequence"), std::string::npos);
}

// A session that exchanges tensors only, for the default Session::run_values.
class TensorOnlySession : public Session {
 public:
  const SessionInfo& info() const override { return info_; }
  Expected<SessionRunResult> run(const TensorMap& inputs) override {
    SessionRunResult r;
    r.outputs = inputs;
    return r;
  }

 private:
  SessionInfo info_;
};

TEST(Sequence, DefaultRunValuesTakesTensorsOnly) {
  TensorOnlySession s;
  auto ok = s.run_values({{"x", f32({1}, {5})}});
  ASSERT_TRUE(ok.has_value());
  expect_tensor_near(ok->outputs["x"].tensor(), {1}, {5});
  auto bad = s.run_values({{"s", testing::sequence_of(DType::kFloat, {})}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(bad.status().message().find("input 's' is a sequence"), std::string::npos);
}

TEST(Sequence, TestDataReadsSequenceProtos) {
  namespace fs = std::filesystem;
  const fs::path dir = "/usr/share/libonnx-testdata/data/node/test_sequence_insert_at_front";
  if (!fs::exists(dir)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto model = load_model(dir / "model.onnx");
  ASSERT_TRUE(model.has_value());
  auto in = load_test_data_input_values(dir / "test_data_set_0", model->proto.graph());
  ASSERT_TRUE(in.has_value()) << in.status().to_string();
  const Value& seq = (*in)[model->proto.graph().input(0).name()];
  ASSERT_TRUE(seq.is_sequence()) << seq.describe();
  EXPECT_FALSE(seq.sequence().tensors.empty());
  auto out = load_test_data_output_values(dir / "test_data_set_0", model->proto.graph());
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  auto run = run_reference_values(model->proto, *in);
  const auto& want = out->begin()->second.sequence().tensors;
  const auto& got = run[out->begin()->first].sequence().tensors;
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    expect_tensor_near(got[i], want[i].shape(), testing::values(want[i]));
}

}  // namespace
}  // namespace onnxdbg
