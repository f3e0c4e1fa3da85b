// Model diff on small text-format models: truncation (the summary sentence), attribute and
// wiring changes, renamed nodes matched by op type and position, initializers, opsets.
#include "diff/diff.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxdbg {
namespace {

LoadedModel model(const std::string& text, const std::string& name) {
  LoadedModel m;
  m.proto = testing::parse_text_model(text);
  m.path = name;
  return m;
}

const char* kBase = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (float[1,4] pos) <float[4] w = {1.0, 2.0, 3.0, 4.0}> {
  stem = Mul(x, w)
  stage4 = Relu(stem)
  head = Sigmoid(stage4)
  pos = Softmax<axis = 1>(head)
}
)";

bool has_change(const std::vector<DiffChange>& cs, const std::string& item,
                const std::string& what) {
  for (const auto& c : cs)
    if (c.item == item && c.what.find(what) != std::string::npos) return true;
  return false;
}

TEST(Diff, IdenticalModels) {
  auto d = diff_models(model(kBase, "a.onnx"), model(kBase, "b.onnx"));
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->identical());
  EXPECT_NE(d->summary.find("same graph (4 nodes)"), std::string::npos) << d->summary;
}

TEST(Diff, TruncatedModelSummary) {
  auto a = model(kBase, "a.onnx");
  auto b = model(kBase, "b.onnx");
  // A training run that died early: the last two nodes are gone, the output stays declared.
  b.proto.mutable_graph()->mutable_node()->RemoveLast();
  b.proto.mutable_graph()->mutable_node()->RemoveLast();
  for (int i = 0; i < a.proto.graph().node_size(); ++i)
    a.proto.mutable_graph()->mutable_node(i)->set_name("n" + std::to_string(i));
  for (int i = 0; i < b.proto.graph().node_size(); ++i)
    b.proto.mutable_graph()->mutable_node(i)->set_name("n" + std::to_string(i));
  auto d = diff_models(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->only_in_a, (std::vector<std::string>{"#2 Sigmoid 'n2'", "#3 Softmax 'n3'"}));
  EXPECT_TRUE(d->only_in_b.empty());
  EXPECT_EQ(d->a_to_b, (std::vector<int>{0, 1, -1, -1}));
  EXPECT_EQ(d->b_to_a, (std::vector<int>{0, 1}));
  EXPECT_EQ(d->summary,
            "b.onnx lacks 2 nodes of a.onnx downstream of #1 Relu 'n1'; its output 'pos' is "
            "produced by no node");
}

TEST(Diff, AttributeWiringAndRenamedNodes) {
  auto a = model(kBase, "a.onnx");
  auto b = model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (float[1,4] pos) <float[4] w = {1.0, 2.0, 3.5, 4.0}> {
  stem = Mul(x, w)
  stage4 = Relu(stem)
  head = Sigmoid(stem)
  pos = Softmax<axis = -1>(head)
}
)",
                 "b.onnx");
  for (int i = 0; i < 4; ++i) {
    a.proto.mutable_graph()->mutable_node(i)->set_name("a" + std::to_string(i));
    b.proto.mutable_graph()->mutable_node(i)->set_name("b" + std::to_string(i));
  }
  auto d = diff_models(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->matched_by_name, 0);
  EXPECT_EQ(d->matched_by_position, 4);
  EXPECT_TRUE(has_change(d->changed, "#3 Softmax 'a3'", "attribute axis 1 -> -1"));
  EXPECT_TRUE(has_change(d->changed, "#2 Sigmoid 'a2'", "input 0 'stage4' -> 'stem'"));
  EXPECT_TRUE(has_change(d->changed, "#0 Mul 'a0'", "renamed to 'b0'"));
  EXPECT_FALSE(has_change(d->changed, "#1 Relu 'a1'", "input"));  // same producer: not rewired
  for (const auto& c : d->changed)  // each change names the index of A's node it is on
    EXPECT_EQ(c.item.rfind("#" + std::to_string(c.node) + " ", 0), 0u) << c.item;
  for (const auto& c : d->graph_changes) EXPECT_EQ(c.node, -1) << c.item;
  EXPECT_TRUE(has_change(d->graph_changes, "initializer 'w'",
                         "1 of 4 values differ (max abs difference 0.5)"));
}

TEST(Diff, OpsetsInputsAndInitializers) {
  auto a = model(kBase, "a.onnx");
  auto b = model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] x) => (float[1,4] pos) <float[2] w = {1.0, 2.0}> {
  stem = Mul(x, w)
  stage4 = Relu(stem)
  head = Sigmoid(stage4)
  pos = Softmax<axis = 1>(head)
}
)",
                 "b.onnx");
  auto d = diff_models(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(has_change(d->graph_changes, "opset ai.onnx", "13 -> 17"));
  EXPECT_TRUE(has_change(d->graph_changes, "input 'x'",
                         "tensor(float32) [1, 4] -> tensor(float32) [2, 4]"));
  EXPECT_TRUE(has_change(d->graph_changes, "initializer 'w'", "float32[4] -> float32[2]"));
  EXPECT_NE(d->summary.find("3 graph-level differences"), std::string::npos) << d->summary;
}

// Two versions of a model with control flow that differ only inside the If's branches: a
// Constant's values in then_branch and, one If deeper in else_branch, Softmax's axis and an
// initializer. Each change is named by its path inside the subgraphs and recorded on the If.
const char* kBranches = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x, bool c, bool d) => (float[1,4] y) {
  y = If(c) <
    then_branch = t () => (float[1,4] ty) {
      k = Constant<value = float[4] {1.0, 2.0, 3.0, 4.0}>()
      ty = Mul(x, k)
    },
    else_branch = e () => (float[1,4] ey) {
      ey = If(d) <
        then_branch = t2 () => (float[1,4] t2y) <float[4] w = {0.5, 0.5, 0.5, 0.5}> {
          m = Mul(x, w)
          t2y = Softmax<axis = 1>(m)
        },
        else_branch = e2 () => (float[1,4] e2y) {
          e2y = Relu(x)
        }
      >
    }
  >
}
)";

TEST(Diff, ChangesInsideNestedSubgraphsAreNamedByPath) {
  auto a = model(kBranches, "a.onnx");
  std::string text_b = kBranches;
  text_b.replace(text_b.find("{1.0, 2.0, 3.0, 4.0}"), 20, "{1.0, 2.5, 3.0, 4.0}");
  text_b.replace(text_b.find("<axis = 1>"), 10, "<axis = 0>");
  text_b.replace(text_b.find("{0.5, 0.5, 0.5, 0.5}"), 20, "{0.5, 0.5, 0.5, 0.75}");
  auto b = model(text_b, "b.onnx");
  auto d = diff_models(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->only_in_a.empty());
  EXPECT_TRUE(d->only_in_b.empty());
  EXPECT_TRUE(d->graph_changes.empty());
  EXPECT_TRUE(has_change(d->changed, "main/If#0:then_branch/#0 Constant",
                         "attribute value: 1 of 4 values differ (max abs difference 0.5)"));
  EXPECT_TRUE(has_change(d->changed, "main/If#0:else_branch/If#0:then_branch/#1 Softmax",
                         "attribute axis 1 -> 0"));
  EXPECT_TRUE(has_change(d->changed, "initializer 'w' in main/If#0:else_branch/If#0:then_branch",
                         "1 of 4 values differ (max abs difference 0.25)"));
  EXPECT_EQ(d->changed.size(), 3u);
  for (const auto& c : d->changed) EXPECT_EQ(c.node, 0) << c.item;  // recorded on the If
  EXPECT_NE(d->summary.find("1 matched node changed (3 changes inside subgraphs)"),
            std::string::npos)
      << d->summary;
  for (const auto& c : d->changed) {
    if (c.what.find("axis") != std::string::npos) {
      EXPECT_EQ(c.graph, "main/If#0:else_branch/If#0:then_branch");
    }
  }
}

TEST(Diff, NodesOnlyOnOneSideOfABranch) {
  auto a = model(kBranches, "a.onnx");
  std::string text_b = kBranches;
  text_b.replace(text_b.find("e2y = Relu(x)"), 13, "r = Relu(x)\n          e2y = Neg(r)");
  auto b = model(text_b, "b.onnx");
  auto d = diff_models(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(has_change(d->changed, "main/If#0:else_branch/If#0:else_branch/#1 Neg", "only in B"));
  // The Relu still reads x: matched, and not rewired.
  EXPECT_FALSE(has_change(d->changed, "main/If#0:else_branch/If#0:else_branch/#0 Relu", "input"));
  EXPECT_EQ(d->changed.size(), 1u);
}

}  // namespace
}  // namespace onnxdbg
