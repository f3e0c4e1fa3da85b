// Toposort of a reversed graph (the result runs and matches), a cycle naming its nodes, and
// cleanup of dead nodes and unused initializers.
#include <gtest/gtest.h>

#include "surgeon_test_util.h"

namespace onnxdbg::surgeon {
namespace {

using namespace testing;

const char* kChain = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y)
<float[3] w = {1.0, -2.0, 0.5}>
{
  a = Add(x, w)
  b = Cast<to = 1>(a)
  c = Relu(b)
  d = Mul(c, a)
  y = Sigmoid(d)
})";

TEST(Toposort, ReversedGraphIsRepaired) {
  auto original = parse_text_model(kChain);
  auto m = original;
  auto* nodes = m.mutable_graph()->mutable_node();
  std::reverse(nodes->begin(), nodes->end());
  auto moved = toposort(m);
  ASSERT_TRUE(moved.has_value()) << moved.status().to_string();
  EXPECT_EQ(*moved, 4);  // the middle node keeps its place
  for (int i = 0; i < m.graph().node_size(); ++i)
    EXPECT_EQ(m.graph().node(i).output(0), original.graph().node(i).output(0));
  expect_lint_clean(m);
  expect_same_outputs(original, m, {{"x", ramp({2, 3})}});
}

TEST(Toposort, ValidOrderIsKept) {
  auto m = parse_text_model(kChain);
  auto moved = toposort(m);
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(*moved, 0);
}

TEST(Toposort, CycleNamesItsNodes) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y)
{
  a = Add(x, c)
  b = Relu(a)
  c = Neg(b)
  y = Identity(b)
})");
  m.mutable_graph()->mutable_node(0)->set_name("add_0");
  m.mutable_graph()->mutable_node(1)->set_name("relu_1");
  m.mutable_graph()->mutable_node(2)->set_name("neg_2");
  const auto before = m.SerializeAsString();
  auto r = toposort(m);
  ASSERT_FALSE(r.has_value());
  const std::string msg = r.status().to_string();
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  for (const char* n : {"#0 Add 'add_0'", "#1 Relu 'relu_1'", "#2 Neg 'neg_2'"})
    EXPECT_NE(msg.find(n), std::string::npos) << msg;
  EXPECT_NE(msg.find("while sorting graph 'main'"), std::string::npos) << msg;
  EXPECT_EQ(m.SerializeAsString(), before);  // untouched
}

TEST(Cleanup, RemovesDeadNodesAndUnusedInitializers) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y)
<float[2] w = {1.0, 2.0}, float[2] unused = {0.0, 0.0}>
{
  dead1 = Neg(x)
  dead2 = Mul(dead1, w)
  y = Relu(x)
})");
  auto st = cleanup(m);
  EXPECT_EQ(st.dead_nodes, 2);
  EXPECT_EQ(st.unused_initializers, 2);
  EXPECT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().initializer_size(), 0);
  expect_lint_clean(m);
}

}  // namespace
}  // namespace onnxdbg::surgeon
