// The graph toolkit (model/graph.h) on small models in ONNX text format: node labels, producers
// and consumers with reads from nested If branches, free names, the subgraph walk and its paths,
// and the topological order with its two errors (a cycle, a name nothing defines).
#include "model/graph.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"

namespace onnxdbg {
namespace {

using testing::parse_text_model;

// The outer If reads c, a, w and b from the main graph only through its branches (the inner If
// inside then_branch reads c, a, w and b; else_branch reads x), so it depends on Relu and Neg.
const char* kGraphNestedIf = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] x) => (float[2] y)
<float[2] w = {1.0, 2.0}>
{
  a = Relu(x)
  b = Neg(a)
  y = If(c) <
    then_branch = then_g () => (float[2] t) {
      t = If(c) <
        then_branch = inner_then () => (float[2] u) {
          u = Add(a, w)
        },
        else_branch = inner_else () => (float[2] v) {
          v = Identity(b)
        }
      >
    },
    else_branch = else_g () => (float[2] e) {
      e = Mul(x, x)
    }
  >
})";

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> sorted(const NameSet& s) {
  return sorted(std::vector<std::string>(s.begin(), s.end()));
}

TEST(NodeLabel, IndexOpTypeAndQuotedName) {
  onnx::NodeProto n;
  n.set_op_type("Conv");
  EXPECT_EQ(node_label(n, 12), "#12 Conv");
  n.set_name("/layer1/conv1/Conv");
  EXPECT_EQ(node_label(n, 12), "#12 Conv '/layer1/conv1/Conv'");
  n.set_domain("ai.onnx");
  EXPECT_EQ(node_label(n, 12), "#12 Conv '/layer1/conv1/Conv'");  // the default domain
  n.set_domain("com.microsoft");
  n.set_op_type("FusedConv");
  n.set_name("fc");
  EXPECT_EQ(node_label(n, 3), "#3 com.microsoft.FusedConv 'fc'");
  EXPECT_EQ(qualified_op_type(n), "com.microsoft.FusedConv");
  // From the parts, as the layerwise report holds them.
  EXPECT_EQ(node_label("", "Softmax", 2), "#2 Softmax");
  EXPECT_EQ(node_label("Conv_2", "Conv", 2), "#2 Conv 'Conv_2'");
}

TEST(NodeLabel, ParsesWhatItWrites) {
  auto p = parse_node_label("#3 com.microsoft.FusedConv 'f c'");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->index, 3);
  EXPECT_EQ(p->op_type, "com.microsoft.FusedConv");
  EXPECT_EQ(p->name, "f c");
  EXPECT_TRUE(p->has_name);
  p = parse_node_label("#12 Conv");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->index, 12);
  EXPECT_EQ(p->op_type, "Conv");
  EXPECT_FALSE(p->has_name);
  p = parse_node_label("#7");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->index, 7);
  EXPECT_EQ(p->op_type, "");
  p = parse_node_label("#1 Add 'it''s'");  // quotes inside a name stay
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "it''s");
  for (const char* bad : {"conv_1", "#", "#x Conv", "#-1 Conv", "#1 Conv name", "#1  Conv", ""})
    EXPECT_FALSE(parse_node_label(bad)) << bad;
}

TEST(GraphToolkit, ProducersAndConsumersCountSubgraphReadsAsTheOwners) {
  const auto m = parse_text_model(kGraphNestedIf);
  const auto& g = m.graph();
  const auto p = producers(g);
  EXPECT_EQ(p.size(), 3u);
  EXPECT_EQ(p.at("a"), 0);
  EXPECT_EQ(p.at("b"), 1);
  EXPECT_EQ(p.at("y"), 2);
  EXPECT_FALSE(p.count("t"));  // defined inside a branch, not by a main-graph node

  const auto c = consumers(g);
  EXPECT_EQ(c.at("x"), (std::vector<int>{0, 2}));
  EXPECT_EQ(c.at("a"), (std::vector<int>{1, 2}));
  EXPECT_EQ(c.at("b"), (std::vector<int>{2}));
  EXPECT_EQ(c.at("w"), (std::vector<int>{2}));
  EXPECT_EQ(c.at("c"), (std::vector<int>{2}));
  EXPECT_FALSE(c.count("u"));

  EXPECT_EQ(implicit_inputs(g.node(2)), (std::vector<std::string>{"c", "a", "w", "b", "x"}));
  EXPECT_EQ(node_reads(g.node(2)), (std::vector<std::string>{"c", "a", "w", "b", "x"}));
  EXPECT_TRUE(implicit_inputs(g.node(0)).empty());
  EXPECT_TRUE(has_subgraph(g.node(2)));
  EXPECT_FALSE(has_subgraph(g.node(1)));
}

TEST(GraphToolkit, FreeNamesAreOuterReadsAtAnyDepth) {
  const auto m = parse_text_model(kGraphNestedIf);
  const auto& g = m.graph();
  EXPECT_TRUE(free_names(g).empty());
  const auto& then_g = g.node(2).attribute(0).g();
  const auto& else_g = g.node(2).attribute(1).g();
  // then_g's If reads c itself and a, w, b through its branches.
  EXPECT_EQ(free_names(then_g), (std::vector<std::string>{"c", "a", "w", "b"}));
  EXPECT_EQ(free_names(else_g), (std::vector<std::string>{"x"}));
  // A name a graph defines is not free in it, even when a branch below reads it.
  const auto& inner_then = then_g.node(0).attribute(0).g();
  EXPECT_EQ(free_names(inner_then), (std::vector<std::string>{"a", "w"}));

  // A main graph's free names are what nothing defines: an undefined input, a lost output.
  const auto broken = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y, float[2] lost)
{
  y = Add(x, x1)
})");
  EXPECT_EQ(free_names(broken.graph()), (std::vector<std::string>{"x1", "lost"}));
}

TEST(GraphToolkit, NameSets) {
  const auto m = parse_text_model(kGraphNestedIf);
  const auto& g = m.graph();
  EXPECT_EQ(sorted(graph_input_names(g)), (std::vector<std::string>{"c", "x"}));
  EXPECT_EQ(sorted(initializer_names(g)), (std::vector<std::string>{"w"}));
  EXPECT_EQ(sorted(graph_output_names(g)), (std::vector<std::string>{"y"}));
  EXPECT_EQ(sorted(defined_names(g)), (std::vector<std::string>{"a", "b", "c", "w", "x", "y"}));
}

TEST(GraphToolkit, WalkGivesEverySubgraphWithItsPath) {
  auto m = parse_text_model(kGraphNestedIf);
  std::vector<GraphVisit> seen;
  walk_graphs(m.graph(), [&](const GraphVisit& v) { seen.push_back(v); });
  ASSERT_EQ(seen.size(), 5u);
  const std::vector<std::string> paths = {
      "main", "main/If#2:then_branch", "main/If#2:then_branch/If#0:then_branch",
      "main/If#2:then_branch/If#0:else_branch", "main/If#2:else_branch"};
  const std::vector<int> parents = {-1, 0, 1, 1, 0};
  const std::vector<int64_t> owners = {-1, 2, 0, 0, 2};
  const std::vector<int> depths = {0, 1, 2, 2, 1};
  for (size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].path, paths[k]);
    EXPECT_EQ(seen[k].index, static_cast<int>(k));
    EXPECT_EQ(seen[k].parent, parents[k]) << paths[k];
    EXPECT_EQ(seen[k].node, owners[k]) << paths[k];
    EXPECT_EQ(seen[k].depth, depths[k]) << paths[k];
  }
  EXPECT_EQ(seen[0].graph, &m.graph());
  EXPECT_EQ(seen[2].graph->name(), "inner_then");
  EXPECT_EQ(seen[3].attribute, "else_branch");

  // Named owners appear by name; a GRAPHS attribute's graphs by position.
  m.mutable_graph()->mutable_node(2)->set_name("outer_if");
  auto* extra = m.mutable_graph()->mutable_node(2)->add_attribute();
  extra->set_name("more");
  extra->set_type(onnx::AttributeProto::GRAPHS);
  extra->add_graphs()->set_name("first");
  extra->add_graphs()->set_name("second");
  std::vector<std::string> got;
  walk_graphs(m.graph(), [&](const GraphVisit& v) { got.push_back(v.path); });
  EXPECT_EQ(got,
            (std::vector<std::string>{
                "main", "main/outer_if:then_branch", "main/outer_if:then_branch/If#0:then_branch",
                "main/outer_if:then_branch/If#0:else_branch", "main/outer_if:else_branch",
                "main/outer_if:more[0]", "main/outer_if:more[1]"}));
  std::vector<std::string> attrs;
  for_each_subgraph(m.graph().node(2), [&](const onnx::GraphProto& sg, const std::string& attr) {
    attrs.push_back(attr + "=" + sg.name());
  });
  EXPECT_EQ(attrs, (std::vector<std::string>{"then_branch=then_g", "else_branch=else_g",
                                             "more[0]=first", "more[1]=second"}));
}

TEST(GraphToolkit, TopologicalOrderKeepsValidOrderAndHonoursSubgraphReads) {
  auto m = parse_text_model(kGraphNestedIf);
  auto order = topological_order(m.graph());
  ASSERT_TRUE(order) << order.status().to_string();
  EXPECT_EQ(*order, (std::vector<int>{0, 1, 2}));
  // The If first: it reads a and b only inside its branches, yet must follow Relu and Neg.
  auto* nodes = m.mutable_graph()->mutable_node();
  std::rotate(nodes->begin(), nodes->begin() + 2, nodes->end());  // If, Relu, Neg
  order = topological_order(m.graph());
  ASSERT_TRUE(order) << order.status().to_string();
  EXPECT_EQ(*order, (std::vector<int>{1, 2, 0}));
}

TEST(GraphToolkit, TopologicalOrderOfASubgraphNeedsItsOuterScope) {
  const auto m = parse_text_model(kGraphNestedIf);
  const auto& else_g = m.graph().node(2).attribute(1).g();
  auto order = topological_order(else_g);
  ASSERT_FALSE(order);
  EXPECT_EQ(order.status().code(), ErrorCode::kModelError);
  EXPECT_EQ(order.status().message(),
            "#0 Mul reads 'x', which no node, graph input, initializer or enclosing graph "
            "defines");
  order = topological_order(else_g, defined_names(m.graph()));
  ASSERT_TRUE(order) << order.status().to_string();
  EXPECT_EQ(*order, (std::vector<int>{0}));
}

TEST(GraphToolkit, TopologicalOrderNamesTheCycle) {
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
  m.mutable_graph()->mutable_node(2)->set_name("neg_2");
  auto order = topological_order(m.graph());
  ASSERT_FALSE(order);
  EXPECT_EQ(order.status().message(),
            "the nodes form a cycle, so no order exists: #1 Relu -> #2 Neg 'neg_2' -> "
            "#0 Add 'add_0' -> #1 Relu");
}

}  // namespace
}  // namespace onnxdbg
