// If, Loop and Scan on the reference interpreter: branches and bodies that read outer-scope
// tensors, loop-carried values, stacked scan outputs, zero-trip loops and error messages.
#include "../../test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;

const char* kIfModel = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (bool c, float[2] x) => (float[N] y) {
    t = Transpose(x)
    y = If(c) <
      then_branch = then_g () => (float[2] a) { a = Identity(t) },
      else_branch = else_g () => (float[4] b) { b = Concat<axis = 0>(x, t) }
    >
  })";

TEST(ControlFlow, IfBranchesReadOuterScope) {
  auto m = parse_text_model(kIfModel);
  const Tensor x = Tensor::from_vector<float>({2}, {3, 4});
  auto then_out = run_reference(m, {{"c", Tensor::scalar<bool>(true)}, {"x", x}});
  expect_tensor_near(then_out["y"], {2}, {3, 4});
  auto else_out = run_reference(m, {{"c", Tensor::scalar<bool>(false)}, {"x", x}});
  expect_tensor_near(else_out["y"], {4}, {3, 4, 3, 4});
}

TEST(ControlFlow, IfConditionMustBeOneValue) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool[2] c, float[2] x) => (float[2] y) {
      y = If(c) <
        then_branch = then_g () => (float[2] a) { a = Identity(x) },
        else_branch = else_g () => (float[2] b) { b = Identity(x) }
      >
    })");
  const std::string err =
      run_reference_error(m, {{"c", Tensor::from_vector<bool>({2}, {true, false})},
                              {"x", Tensor::from_vector<float>({2}, {1, 2})}});
  EXPECT_NE(err.find("cond"), std::string::npos) << err;
  EXPECT_NE(err.find("shape 2"), std::string::npos) << err;
}

const char* kLoopModel = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (int64 m, float[1] init, float[1] step) => (float[N] acc, int64[K] iters) {
    cond = Constant<value = bool {1}>()
    acc, iters = Loop(m, cond, init) <
      body = body_g (int64 i, bool c_in, float[M] a_in) => (bool c_out, float[P] a_out, int64 it) {
        c_out = Identity(c_in)
        a_out = Concat<axis = 0>(a_in, step)
        it = Identity(i)
      }
    >
  })";

TEST(ControlFlow, LoopCarriesValuesAndStacksScanOutputs) {
  // Each iteration appends the outer-scope `step`; the iteration numbers are stacked.
  auto m = parse_text_model(kLoopModel);
  auto out = run_reference(m, {{"m", Tensor::scalar<int64_t>(3)},
                               {"init", Tensor::from_vector<float>({1}, {1})},
                               {"step", Tensor::from_vector<float>({1}, {5})}});
  expect_tensor_near(out["acc"], {4}, {1, 5, 5, 5});
  expect_tensor_near(out["iters"], {3}, {0, 1, 2});
}

TEST(ControlFlow, LoopWithZeroTrips) {
  auto m = parse_text_model(kLoopModel);
  auto out = run_reference(m, {{"m", Tensor::scalar<int64_t>(0)},
                               {"init", Tensor::from_vector<float>({1}, {1})},
                               {"step", Tensor::from_vector<float>({1}, {5})}});
  expect_tensor_near(out["acc"], {1}, {1});
  EXPECT_EQ(out["iters"].dtype(), DType::kInt64);
  EXPECT_EQ(shape_to_string(out["iters"].shape()), "0");
}

TEST(ControlFlow, LoopStopsOnCondition) {
  // No trip count: the body's condition is flags[i] (read from the outer scope), so
  // flags = [1, 1, 0, 1] stops after iteration 2.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool[4] flags) => (int64[K] iters) {
      go = Constant<value = bool {1}>()
      iters = Loop(no_m, go) <
        body = body_g (int64 i, bool c_in) => (bool c_out, int64 it) {
          c_out = Gather(flags, i)
          it = Identity(i)
        }
      >
    })");
  // The text parser cannot leave a leading input empty; omit M here.
  m.mutable_graph()->mutable_node(1)->set_input(0, "");
  auto out =
      run_reference(m, {{"flags", Tensor::from_vector<bool>({4}, {true, true, false, true})}});
  expect_tensor_near(out["iters"], {3}, {0, 1, 2});
}

TEST(ControlFlow, ScanForwardAndReverse) {
  // State: the previous slice; scan outputs: [state, slice] per step, once forward and once with
  // the input read in reverse.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (float[1] s0, float[3,1] x) => (float[1] s, float[3,2] y) {
      s, y = Scan(s0, x) <
        num_scan_inputs = 1,
        scan_input_directions = [1],
        body = body_g (float[1] prev, float[1] cur) => (float[1] next, float[2] pair) {
          next = Identity(cur)
          pair = Concat<axis = 0>(prev, cur)
        }
      >
    })");
  auto out = run_reference(m, {{"s0", Tensor::from_vector<float>({1}, {0})},
                               {"x", Tensor::from_vector<float>({3, 1}, {1, 2, 3})}});
  expect_tensor_near(out["s"], {1}, {1});
  expect_tensor_near(out["y"], {3, 2}, {0, 3, 3, 2, 2, 1});
}

TEST(ControlFlow, ScanOutputAxis) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (float[2,3] x) => (float[3,2] y) {
      y = Scan(x) <
        num_scan_inputs = 1,
        scan_input_axes = [1],
        scan_output_axes = [-1],
        body = body_g (float[2] col) => (float[2] out) { out = Identity(col) }
      >
    })");
  // Column j of x becomes column j of y: y = x stacked along the last axis = x itself (2x3).
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  expect_tensor_near(out["y"], {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(ControlFlow, ErrorInsideBodyNamesIteration) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int64 m, float[2] x) => (float[K] ys) {
      cond = Constant<value = bool {1}>()
      ys = Loop(m, cond) <
        body = body_g (int64 i, bool c_in) => (bool c_out, float y) {
          c_out = Identity(c_in)
          y = Gather(x, i)
        }
      >
    })");
  const std::string err = run_reference_error(
      m, {{"m", Tensor::scalar<int64_t>(3)}, {"x", Tensor::from_vector<float>({2}, {1, 2})}});
  EXPECT_NE(err.find("index 2"), std::string::npos) << err;
  EXPECT_NE(err.find("iteration 2"), std::string::npos) << err;
}

}  // namespace
}  // namespace onnxdbg
