// inline_if_branch: an If replaced by one of its branches computes what the If computes when its
// condition takes that value, with the branch's names kept apart from the main graph's (in nested
// bodies too), its initializers lifted and an output it passes through made by an Identity.
#include <gtest/gtest.h>

#include "surgeon_test_util.h"

namespace onnxdbg::surgeon {
namespace {

using namespace testing;

TEST(InlineIf, EachBranchComputesWhatTheIfComputesForThatCondition) {
  const auto m = parse_text_model(kNested);
  for (bool then_branch : {true, false}) {
    SCOPED_TRACE(then_branch ? "then_branch" : "else_branch");
    auto inlined = inline_if_branch(m, 1, then_branch);
    ASSERT_TRUE(inlined.has_value()) << inlined.status().to_string();
    EXPECT_EQ(count_op(*inlined, "If"), then_branch ? 1 : 0);  // the nested one stays
    expect_lint_clean(*inlined);
    for (bool c : {true, false}) {
      // The inlined model computes the chosen branch whatever c is; the original does when c
      // selects it.
      if (c != then_branch) continue;
      expect_same_outputs(m, *inlined, {{"c", Tensor::scalar<bool>(c)}, {"x", ramp({4})}});
    }
  }
  // The branch's own `a` was renamed, in the nested If's bodies too, and the outer `a` kept.
  auto inlined = inline_if_branch(m, 1, true);
  ASSERT_TRUE(inlined.has_value());
  const auto& g = inlined->graph();
  EXPECT_EQ(g.node(0).output(0), "a");
  EXPECT_EQ(g.node(1).op_type(), "Sigmoid");
  EXPECT_NE(g.node(1).output(0), "a");
  EXPECT_EQ(g.node(2).op_type(), "If");
  EXPECT_EQ(g.node(2).output(0), "y");  // the branch output takes the If's name
  EXPECT_EQ(g.node(2).attribute(0).g().node(0).input(0), g.node(1).output(0));
}

TEST(InlineIf, AnOutputOfTheOuterScopeOrAnInitializerComesThroughAnIdentity) {
  const auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] x) => (float[2] y, float[2] w)
{
  y, w = If(c) <
    then_branch = t () => (float[2] x, float[2] k) <float[2] k = {5.0, 6.0}> {},
    else_branch = e () => (float[2] p, float[2] q) { p = Neg(x)  q = Abs(x) }
  >
})");
  auto inlined = inline_if_branch(m, 0, true);
  ASSERT_TRUE(inlined.has_value()) << inlined.status().to_string();
  EXPECT_EQ(count_op(*inlined, "Identity"), 2);
  expect_lint_clean(*inlined);
  expect_same_outputs(m, *inlined, {{"c", Tensor::scalar<bool>(true)}, {"x", ramp({2})}});
}

TEST(InlineIf, AnOmittedOptionalOutputStaysOmitted) {
  // Dropout's optional mask output left out ("") both in the main graph and in the branch.
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] x) => (float[2] y)
{
  d = Dropout(x)
  y = If(c) <
    then_branch = t () => (float[2] p) { p = Dropout(d) },
    else_branch = e () => (float[2] q) { q = Neg(d) }
  >
})");
  m.mutable_graph()->mutable_node(0)->add_output("");
  m.mutable_graph()
      ->mutable_node(1)
      ->mutable_attribute(0)
      ->mutable_g()
      ->mutable_node(0)
      ->add_output("");
  auto inlined = inline_if_branch(m, 1, true);
  ASSERT_TRUE(inlined.has_value()) << inlined.status().to_string();
  const auto& dropout = inlined->graph().node(1);
  ASSERT_EQ(dropout.output_size(), 2);
  EXPECT_EQ(dropout.output(0), "y");
  EXPECT_EQ(dropout.output(1), "");
  expect_lint_clean(*inlined);
  expect_same_outputs(m, *inlined, {{"c", Tensor::scalar<bool>(true)}, {"x", ramp({2})}});
}

// Names only the If's own branches define stay as they are (the If goes with its branches), and
// the inlined nodes are named by their path, an unnamed If or node by its op type and index.
TEST(InlineIf, BranchNamesStayAndInlinedNodesAreNamedByPath) {
  const auto m = parse_text_model(kNested);
  auto once = inline_if_branch(m, 1, true);
  ASSERT_TRUE(once.has_value());
  // The nested If, now node 2 of the main graph, defines q in one branch and r in the other.
  auto twice = inline_if_branch(*once, 2, false);
  ASSERT_TRUE(twice.has_value()) << twice.status().to_string();
  const auto& g = twice->graph();
  ASSERT_EQ(g.node_size(), 4);
  EXPECT_EQ(g.node(1).name(), "If#1/then_branch/Sigmoid#0");
  EXPECT_EQ(g.node(2).name(), "If#1/then_branch/If#1/else_branch/Neg#0");
  EXPECT_EQ(g.node(2).output(0), "y");
  expect_lint_clean(*twice);

  auto other = inline_if_branch(m, 1, false);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->graph().node(1).output(0), "y");      // b became the If's output
  EXPECT_EQ(other->graph().initializer(0).name(), "k");  // k is defined by its branch alone
}

TEST(InlineIf, ANodeThatIsNotAnIfIsRefusedByName) {
  const auto m = parse_text_model(kNested);
  auto r = inline_if_branch(m, 0, true);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("Relu"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("is not an If"), std::string::npos);
  EXPECT_FALSE(inline_if_branch(m, 9, true).has_value());
}

}  // namespace
}  // namespace onnxdbg::surgeon
