// Graphs whose nodes are listed before the producers of their inputs (published models do this;
// ONNX Runtime sorts them): the reference runs them in a topological order, subgraphs and
// run_prefix included, and a cycle is an error naming its nodes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "reference/interpreter.h"
#include "test_util.h"

namespace onnxdbg::reference {
namespace {

// The chain x -> a -> b -> c -> d listed backwards.
const char* kBackwards = R"(
<ir_version: 8, opset_import: ["" : 13]>
backwards (float[4] x) => (float[4] d)
{
  d = Add(c, x)
  c = Exp(b)
  b = Neg(a)
  a = Relu(x)
}
)";

const char* kForwards = R"(
<ir_version: 8, opset_import: ["" : 13]>
forwards (float[4] x) => (float[4] d)
{
  a = Relu(x)
  b = Neg(a)
  c = Exp(b)
  d = Add(c, x)
}
)";

const std::map<std::string, Tensor> kInput = {
    {"x", Tensor::from_vector<float>({4}, {-1.0f, 0.5f, 2.0f, -3.0f})}};

TEST(NodeOrder, OutOfOrderNodesRunInTopologicalOrderWithTheSameValues) {
  auto sorted = testing::run_reference(testing::parse_text_model(kForwards), kInput);
  auto interp = Interpreter::create(testing::parse_text_model(kBackwards));
  ASSERT_TRUE(interp.has_value()) << interp.status().to_string();
  std::vector<std::string> names;
  std::vector<size_t> indices;
  auto outs = (*interp)->run(
      kInput, [&](const onnx::NodeProto&, size_t i, const std::string& n, const Tensor&) {
        names.push_back(n);
        indices.push_back(i);
      });
  ASSERT_TRUE(outs.has_value()) << outs.status().to_string();
  EXPECT_EQ(testing::values(outs->at("d")), testing::values(sorted.at("d")));
  // The hook sees the run order, with each node's index in the file.
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(indices, (std::vector<size_t>{3, 2, 1, 0}));
  // run_prefix counts nodes in the run order.
  names.clear();
  ASSERT_TRUE((*interp)
                  ->run_prefix(
                      kInput,
                      [&](const onnx::NodeProto&, size_t, const std::string& n, const Tensor&) {
                        names.push_back(n);
                      },
                      2)
                  .is_ok());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
}

TEST(NodeOrder, SubgraphNodesAndOuterReadsAreSortedToo) {
  // The If comes before 'late', which its branch reads; the branch lists its nodes backwards.
  auto m = testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] x) => (float[2] y) {
  y = If(c) <then_branch = t () => (float[2] o) { o = Neg(r)  r = Relu(late) },
             else_branch = e () => (float[2] o2) { o2 = Neg(x) }>
  late = Abs(x)
})");
  auto interp = Interpreter::create(m);
  ASSERT_TRUE(interp.has_value()) << interp.status().to_string();
  auto outs = (*interp)->run({{"c", Tensor::from_vector<bool>({}, {true})},
                              {"x", Tensor::from_vector<float>({2}, {-2.0f, 3.0f})}});
  ASSERT_TRUE(outs.has_value()) << outs.status().to_string();
  EXPECT_EQ(testing::values(outs->at("y")), (std::vector<double>{-2.0, -3.0}));
}

TEST(NodeOrder, ACycleIsAModelErrorNamingItsNodes) {
  auto interp = Interpreter::create(testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  a = Add(x, b)
  b = Relu(a)
  y = Neg(b)
})"));
  ASSERT_TRUE(interp.has_value()) << interp.status().to_string();
  auto outs = (*interp)->run({{"x", Tensor::from_vector<float>({2}, {1.0f, 2.0f})}});
  ASSERT_FALSE(outs.has_value());
  EXPECT_EQ(outs.status().code(), ErrorCode::kModelError);
  EXPECT_NE(outs.status().to_string().find("cycle"), std::string::npos)
      << outs.status().to_string();
  EXPECT_NE(outs.status().to_string().find("#0 Add"), std::string::npos)
      << outs.status().to_string();
}

}  // namespace
}  // namespace onnxdbg::reference
