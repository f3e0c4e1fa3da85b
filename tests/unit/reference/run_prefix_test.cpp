// Interpreter::run_prefix: the layerwise pass runs the reference only up to a batch's last tensor.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "reference/interpreter.h"
#include "test_util.h"

namespace onnxdbg::reference {
namespace {

const char* kChain = R"(
<ir_version: 8, opset_import: ["" : 13]>
chain (float[4] x) => (float[4] d)
{
  a = Relu(x)
  b = Neg(a)
  c = Exp(b)
  d = Add(c, x)
}
)";

struct Seen {
  std::vector<std::string> names;
  std::map<std::string, Tensor> values;
};

NodeHook record(Seen& seen) {
  return [&seen](const onnx::NodeProto&, size_t, const std::string& name, const Tensor& v) {
    seen.names.push_back(name);
    seen.values.insert_or_assign(name, v);
  };
}

TEST(RunPrefix, StopsAfterTheGivenNodeWithTheSameValuesAsAFullRun) {
  auto interp = Interpreter::create(testing::parse_text_model(kChain));
  ASSERT_TRUE(interp.has_value()) << interp.status().to_string();
  const std::map<std::string, Tensor> in = {
      {"x", Tensor::from_vector<float>({4}, {-1.0f, 0.5f, 2.0f, -3.0f})}};

  Seen full;
  auto outs = (*interp)->run(in, record(full));
  ASSERT_TRUE(outs.has_value()) << outs.status().to_string();
  EXPECT_EQ(full.names, (std::vector<std::string>{"a", "b", "c", "d"}));

  Seen two;
  ASSERT_TRUE((*interp)->run_prefix(in, record(two), 2).is_ok());
  EXPECT_EQ(two.names, (std::vector<std::string>{"a", "b"}));
  for (const auto& n : two.names)
    EXPECT_EQ(testing::values(two.values.at(n)), testing::values(full.values.at(n))) << n;

  Seen none;
  ASSERT_TRUE((*interp)->run_prefix(in, record(none), 0).is_ok());
  EXPECT_TRUE(none.names.empty());

  // Past the end means the whole graph; a later plain run is whole again and gives the same d.
  Seen all;
  ASSERT_TRUE((*interp)->run_prefix(in, record(all), 99).is_ok());
  EXPECT_EQ(all.names, full.names);
  auto again = (*interp)->run(in);
  ASSERT_TRUE(again.has_value()) << again.status().to_string();
  EXPECT_EQ(testing::values(again->at("d")), testing::values(outs->at("d")));
}

TEST(RunPrefix, ReportsTheErrorsOfTheNodesItRuns) {
  auto interp = Interpreter::create(testing::parse_text_model(kChain));
  ASSERT_TRUE(interp.has_value());
  Status st = (*interp)->run_prefix({}, {}, 2);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'x' was not provided"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace onnxdbg::reference
