// The control flow as it ran (taken_branches.h): observe_control_flow reads each If's condition
// and each Loop's iteration count from a reference run, unroll_loop replaces a Loop by its
// iterations, and inline_taken_branches does both level by level; each result computes what the
// model computes on those inputs.
#include "surgeon/taken_branches.h"

#include <gtest/gtest.h>

#include "surgeon_test_util.h"

namespace onnxdbg::surgeon {
namespace {

using namespace testing;

// Each iteration appends the outer-scope `step` to the carried value (its shape grows), and the
// iteration numbers are stacked as a scan output (reference/ops/control_flow_test.cpp's model).
const char* kLoop = R"(
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

std::map<std::string, Tensor> loop_inputs(int64_t m) {
  return {{"m", Tensor::scalar<int64_t>(m)},
          {"init", Tensor::from_vector<float>({1}, {1})},
          {"step", Tensor::from_vector<float>({1}, {5})}};
}

TEST(UnrollLoop, TheIterationsComputeWhatTheLoopComputes) {
  const auto m = parse_text_model(kLoop);
  for (int64_t n : {1, 3}) {
    SCOPED_TRACE(n);
    auto run = observe_control_flow(m, {}, loop_inputs(n));
    ASSERT_TRUE(run.has_value()) << run.status().to_string();
    EXPECT_EQ(run->iterations.at(1), n);
    auto unrolled = unroll_loop(m, 1, n);
    ASSERT_TRUE(unrolled.has_value()) << unrolled.status().to_string();
    EXPECT_EQ(count_op(*unrolled, "Loop"), 0);
    EXPECT_EQ(count_op(*unrolled, "Concat"), n + 1);  // one per iteration, one stacking `iters`
    expect_lint_clean(*unrolled);
    expect_same_outputs(m, *unrolled, loop_inputs(n));
  }
  auto three = unroll_loop(m, 1, 3);
  ASSERT_TRUE(three.has_value());
  // Iteration 2's Concat, named by its path and iteration, writing a value of its own.
  bool found = false;
  for (const auto& n : three->graph().node())
    if (n.name() == "Loop#1/body/Concat#1 [iter 2]") {
      found = true;
      EXPECT_EQ(n.output(0), "a_out__iter2");
    }
  EXPECT_TRUE(found);
  EXPECT_FALSE(unroll_loop(m, 1, 0).has_value());
  auto not_loop = unroll_loop(m, 0, 1);
  ASSERT_FALSE(not_loop.has_value());
  EXPECT_NE(not_loop.status().message().find("is not a Loop"), std::string::npos);
}

// No trip count: the body's condition (flags[i], read from the outer scope) stops the Loop; the
// iterations observed are those it ran, and the unrolled model needs no condition.
TEST(UnrollLoop, ALoopStoppedByItsConditionUnrollsTheIterationsItRan) {
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
  m.mutable_graph()->mutable_node(1)->set_input(0, "");
  const std::map<std::string, Tensor> in = {
      {"flags", Tensor::from_vector<bool>({4}, {true, true, false, true})}};
  auto flat = inline_taken_branches(m, {}, in);
  ASSERT_TRUE(flat.has_value()) << flat.status().to_string();
  ASSERT_EQ(flat->taken.size(), 1u);
  EXPECT_EQ(flat->taken[0].op_type, "Loop");
  EXPECT_EQ(flat->taken[0].iterations, 3);
  EXPECT_EQ(count_op(flat->model, "Loop"), 0);
  expect_same_outputs(m, flat->model, in);
}

// Scan, read in reverse (scan_input_directions 1), and Scan on axis 1 stacked on the last axis
// (scan_output_axes -1): the unrolled iterations compute what the Scan computes.
TEST(UnrollScan, TheSlicesComputeWhatTheScanComputes) {
  const auto reverse = parse_text_model(R"(
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
  const std::map<std::string, Tensor> in = {{"s0", Tensor::from_vector<float>({1}, {0})},
                                            {"x", Tensor::from_vector<float>({3, 1}, {1, 2, 3})}};
  auto flat = inline_taken_branches(reverse, {}, in);
  ASSERT_TRUE(flat.has_value()) << flat.status().to_string();
  ASSERT_EQ(flat->taken.size(), 1u);
  EXPECT_EQ(flat->taken[0].op_type, "Scan");
  EXPECT_EQ(flat->taken[0].iterations, 3);
  EXPECT_EQ(count_op(flat->model, "Scan"), 0);
  EXPECT_EQ(count_op(flat->model, "Gather"), 3);
  expect_lint_clean(flat->model);
  expect_same_outputs(reverse, flat->model, in);

  const auto columns = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y) {
  y = Scan(x) <
    num_scan_inputs = 1,
    scan_input_axes = [1],
    scan_output_axes = [-1],
    body = body_g (float[2] col) => (float[2] out) { out = Neg(col) }
  >
})");
  const std::map<std::string, Tensor> x = {
      {"x", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})}};
  auto run = observe_control_flow(columns, {}, x);
  ASSERT_TRUE(run.has_value()) << run.status().to_string();
  EXPECT_EQ(run->iterations.at(0), 3);
  auto unrolled = unroll_scan(columns, 0, run->scan_input_shapes.at(0));
  ASSERT_TRUE(unrolled.has_value()) << unrolled.status().to_string();
  bool found = false;
  for (const auto& n : unrolled->graph().node()) found |= n.name() == "Scan#0/body/Neg#0 [iter 2]";
  EXPECT_TRUE(found);
  expect_lint_clean(*unrolled);
  expect_same_outputs(columns, *unrolled, x);
}

// An If inside a Loop body: the Loop is unrolled first, then each iteration's If is inlined by its
// own condition; a Loop that runs no iteration stays, with why.
TEST(InlineTakenBranches, IfsInsideAnUnrolledLoopFollowEachIterationsCondition) {
  const auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int64 m, float[2] x) => (float[2] y) {
  cond = Constant<value = bool {1}>()
  two = Constant<value = int64 {2}>()
  y = Loop(m, cond, x) <
    body = body_g (int64 i, bool c_in, float[2] v) => (bool c_out, float[2] v_out) {
      c_out = Identity(c_in)
      r = Less(i, two)
      v_out = If(r) <
        then_branch = t () => (float[2] p) { p = Add(v, x) },
        else_branch = e () => (float[2] q) { q = Neg(v) }
      >
    }
  >
})");
  const std::map<std::string, Tensor> in = {{"m", Tensor::scalar<int64_t>(3)}, {"x", ramp({2})}};
  auto flat = inline_taken_branches(m, {}, in);
  ASSERT_TRUE(flat.has_value()) << flat.status().to_string();
  EXPECT_EQ(count_op(flat->model, "Loop"), 0);
  EXPECT_EQ(count_op(flat->model, "If"), 0);
  ASSERT_EQ(flat->taken.size(), 4u);  // the Loop, then one If per iteration
  EXPECT_EQ(flat->taken[1].node, "Loop#2/body/If#2 [iter 0]");
  EXPECT_TRUE(flat->taken[1].then_branch);
  EXPECT_TRUE(flat->taken[2].then_branch);
  EXPECT_FALSE(flat->taken[3].then_branch);  // i = 2
  EXPECT_EQ(flat->taken[3].depth, 1);
  expect_lint_clean(flat->model);
  expect_same_outputs(m, flat->model, in);

  const std::map<std::string, Tensor> none = {{"m", Tensor::scalar<int64_t>(0)}, {"x", ramp({2})}};
  auto kept = inline_taken_branches(m, {}, none);
  ASSERT_TRUE(kept.has_value()) << kept.status().to_string();
  EXPECT_TRUE(kept->taken.empty());
  ASSERT_EQ(kept->kept.size(), 1u);
  EXPECT_EQ(kept->kept[0], "Loop 'Loop#2' ran no iteration");
}

// inline_taken_branches: each If replaced by the branch its condition picks, level by level, and
// the result computing what the model computes on those inputs.
TEST(InlineTakenBranches, EachLevelFollowsTheCondition) {
  const auto m = parse_text_model(kNested);
  for (bool c : {true, false}) {
    SCOPED_TRACE(c);
    const std::map<std::string, Tensor> in = {{"c", Tensor::scalar<bool>(c)}, {"x", ramp({4})}};
    auto flat = inline_taken_branches(m, {}, in);
    ASSERT_TRUE(flat.has_value()) << flat.status().to_string();
    EXPECT_EQ(count_op(flat->model, "If"), 0);
    ASSERT_EQ(flat->taken.size(), c ? 2u : 1u);
    EXPECT_EQ(flat->taken[0].node, "If#1");
    EXPECT_EQ(flat->taken[0].then_branch, c);
    if (c) {
      EXPECT_EQ(flat->taken[1].node, "If#1/then_branch/If#1");
      EXPECT_EQ(flat->taken[1].depth, 1);
    }
    expect_same_outputs(m, flat->model, in);
  }
  // A condition that is not one element is refused, naming the If.
  auto bad = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool[2] c, float[2] x) => (float[2] y)
{
  y = If(c) <
    then_branch = t () => (float[2] p) { p = Neg(x) },
    else_branch = e () => (float[2] q) { q = Abs(x) }
  >
})");
  Tensor two(DType::kBool, {2});
  auto r = inline_taken_branches(bad, {}, {{"c", two}, {"x", ramp({2})}});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("#0 If: its condition 'c' must be a single bool"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace onnxdbg::surgeon
