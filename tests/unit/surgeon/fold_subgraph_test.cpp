// Constant folding inside If/Loop bodies: nodes computable from the body's constants and the
// outer scope's fold into body initializers (a folded body output through an Identity), Shape
// folds in If branches once input shapes are set, and the folded models give the same outputs on
// the reference interpreter and, through the CLI, on ONNX Runtime.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "data/npz.h"
#include "surgeon_test_util.h"

namespace onnxdbg::surgeon {
namespace {

using namespace testing;

const onnx::GraphProto& branch(const onnx::ModelProto& m, int node, const std::string& attr) {
  for (const auto& a : m.graph().node(node).attribute())
    if (a.name() == attr) return a.g();
  ADD_FAILURE() << "no attribute " << attr;
  return m.graph();
}

// Both branches compute from the outer initializer w and constants of their own; the condition
// and x are graph inputs, so the If itself cannot fold.
const char* kIf = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[4] x) => (float[4] y)
<float[4] w = {1.0, 2.0, 3.0, 4.0}>
{
  y = If(c) <
    then_branch = then_g () => (float[4] a) {
      two = Constant<value = float {2.0}>()
      w2 = Mul(w, two)
      a = Add(x, w2)
    },
    else_branch = else_g () => (float[4] b) {
      three = Constant<value = float {3.0}>()
      b = Mul(w, three)
    }
  >
})";

TEST(FoldSubgraphs, IfBranchesFoldFromOuterConstants) {
  auto m = parse_text_model(kIf);
  const auto original = m;
  auto st = fold_constants(m, {});
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->nodes_folded, 4);
  EXPECT_EQ(st->subgraph_nodes_folded, 4);
  ASSERT_EQ(m.graph().node_size(), 1);
  const auto& then_g = branch(m, 0, "then_branch");
  const auto& else_g = branch(m, 0, "else_branch");
  // then: Add(x, w2) stays, w2 is now an initializer of the branch.
  ASSERT_EQ(then_g.node_size(), 1);
  EXPECT_EQ(then_g.node(0).op_type(), "Add");
  ASSERT_EQ(then_g.initializer_size(), 1);
  EXPECT_EQ(then_g.initializer(0).name(), "w2");
  // else: the output itself was constant; an Identity of the folded value produces it.
  ASSERT_EQ(else_g.node_size(), 1);
  EXPECT_EQ(else_g.node(0).op_type(), "Identity");
  EXPECT_EQ(else_g.node(0).output(0), "b");
  ASSERT_EQ(else_g.initializer_size(), 1);
  EXPECT_EQ(else_g.initializer(0).name(), else_g.node(0).input(0));
  expect_lint_clean(m);
  for (bool c : {true, false})
    expect_same_outputs(original, m, {{"c", Tensor::scalar<bool>(c)}, {"x", ramp({4})}});
  // A second run finds nothing more (the Identity stays).
  auto again = fold_constants(m, {});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->nodes_folded, 0);
}

TEST(FoldSubgraphs, LoopBodyFoldsWhatDoesNotDependOnTheIteration) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int64 n, float[1] init) => (float[1] acc)
<float[1] step = {5.0}>
{
  cond = Constant<value = bool {1}>()
  acc = Loop(n, cond, init) <
    body = body_g (int64 i, bool c_in, float[1] a_in) => (bool c_out, float[1] a_out) {
      c_out = Identity(c_in)
      half = Constant<value = float {0.5}>()
      inc = Mul(step, half)
      fi = Cast<to = 1>(i)
      inc_i = Mul(inc, fi)
      a_out = Add(a_in, inc_i)
    }
  >
})");
  const auto original = m;
  auto st = fold_constants(m, {});
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->subgraph_nodes_folded, 2);  // half and inc; the rest reads i or a_in
  EXPECT_EQ(st->nodes_folded, 3);           // and cond in the main graph
  const auto& body = branch(m, 0, "body");
  EXPECT_EQ(body.node_size(), 4);
  EXPECT_EQ(count_op(body, "Constant"), 0);
  expect_lint_clean(m);
  expect_same_outputs(original, m, {{"n", Tensor::scalar<int64_t>(4)}, {"init", ramp({1})}});
}

TEST(FoldSubgraphs, ShapeFoldsInIfBranchesOnceInputShapesAreSet) {
  const char* text = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[N,4] x) => (float[2] y)
{
  y = If(c) <
    then_branch = then_g () => (float[2] a) {
      s = Shape(x)
      a = Cast<to = 1>(s)
    },
    else_branch = else_g () => (float[2] b) {
      b = Constant<value = float[2] {0.0, 0.0}>()
    }
  >
})";
  auto dynamic = parse_text_model(text);
  auto st = fold_constants(dynamic, {});
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(count_op(branch(dynamic, 0, "then_branch"), "Shape"), 1);  // N is unknown

  auto m = parse_text_model(text);
  const auto original = m;
  SanitizeOptions opt;
  opt.input_shapes["x"] = {3, 4};
  opt.fold_constants = true;
  opt.cleanup = true;
  auto rep = sanitize(m, {}, opt);
  ASSERT_TRUE(rep.has_value()) << rep.status().to_string();
  const auto& then_g = branch(m, 0, "then_branch");
  ASSERT_EQ(then_g.node_size(), 1) << rep->summary();
  EXPECT_EQ(then_g.node(0).op_type(), "Identity");
  EXPECT_NE(rep->summary().find("inside subgraphs"), std::string::npos) << rep->summary();
  expect_lint_clean(m);
  for (bool c : {true, false})
    expect_same_outputs(original, m, {{"c", Tensor::scalar<bool>(c)}, {"x", ramp({3, 4})}});
}

TEST(FoldSubgraphs, FoldedIfModelAgreesOnOnnxRuntime) {
  namespace fs = std::filesystem;
  const TempDir tmp = onnxdbg::testing::make_temp_dir("onnxdbg_fold_sub_");
  const fs::path dir = tmp.path();
  auto m = parse_text_model(kIf);
  ASSERT_TRUE(fold_constants(m, {}).has_value());
  ASSERT_TRUE(save_model(m, dir / "folded.onnx").is_ok());
  // Both branches, through the real CLI: reference and onnxruntime must agree.
  for (bool c : {true, false}) {
    ASSERT_TRUE(
        save_npz(dir / "in.npz", {{"c", Tensor::scalar<bool>(c)}, {"x", ramp({4})}}).is_ok());
    const auto r = onnxdbg::testing::run_cli(
        "run folded.onnx --backends reference,onnxruntime --load-inputs in.npz", dir);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("pass"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace onnxdbg::surgeon
