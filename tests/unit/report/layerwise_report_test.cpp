// The layerwise report's own/inherited/in-context split (issue 19 item 4): a node that fails in
// the whole graph but agrees alone is "inherited" only when one of its inputs disagrees; with
// agreeing inputs it failed "in context" (the backend fused it, changed its layout or computed it
// in float32), and the text, the JSON and the first divergent node say so.
#include "report/layerwise_report.h"

#include <gtest/gtest.h>

#include <sstream>

namespace onnxdbg {
namespace {

LayerTensor tensor(const std::string& name, size_t node, const std::string& op) {
  LayerTensor t;
  t.name = name;
  t.node_index = node;
  t.node = "/" + op + "_" + std::to_string(node);
  t.op_type = op;
  t.dtype = DType::kFloat16;
  t.shape = {4};
  return t;
}

LayerComparison failing(size_t tensor, double total, double own, bool input_failed) {
  LayerComparison c;
  c.tensor = tensor;
  c.backend = "onnxruntime";
  c.observed = true;
  c.isolated = true;
  c.tol = {1e-5, 1e-5};
  c.result.pass = false;
  c.result.max_abs_error = total;
  c.own = TensorComparison{};
  c.own->pass = own <= 1e-5;
  c.own->max_abs_error = own;
  c.input_failed = input_failed;
  return c;
}

// conv_in reads the graph input (agrees) and fails only in the graph; act reads conv_in's
// failing output and agrees alone: its error is inherited.
LayerwiseReport report() {
  LayerwiseReport rep;
  rep.golden_source = "reference";
  rep.tensors = {tensor("c1", 0, "Conv"), tensor("s1", 1, "Sigmoid")};
  rep.comparisons = {failing(0, 4.9e-4, 0, false), failing(1, 2.4e-4, 0, true)};
  LayerwiseBackend b;
  b.backend = "onnxruntime";
  b.observed = 2;
  b.failed = 2;
  FirstDivergence f;
  f.tensor = 0;
  f.backend = "onnxruntime";
  f.own_error = 0;
  f.basis = "context";
  b.first = f;
  rep.first = f;
  rep.backends = {b};
  return rep;
}

TEST(LayerwiseReport, AFailureWithAgreeingInputsIsInContextNotInherited) {
  const LayerwiseReport rep = report();
  EXPECT_TRUE(rep.comparisons[0].context_failure());
  EXPECT_FALSE(rep.comparisons[1].context_failure()) << "its input disagrees";
  std::ostringstream os;
  report::print_layerwise_report(rep, os, /*color=*/false);
  const std::string text = os.str();
  EXPECT_NE(text.find("#0 Conv '/Conv_0'"), std::string::npos) << text;
  EXPECT_NE(text.find("in context"), std::string::npos) << text;
  EXPECT_NE(text.find("inherited"), std::string::npos) << text;
  EXPECT_NE(text.find("first divergent node: #0 Conv '/Conv_0', tensor 'c1', on onnxruntime: "
                      "alone, on golden inputs, it agrees"),
            std::string::npos)
      << text;

  nlohmann::json j;
  report::add_layerwise_json(rep, j);
  EXPECT_EQ(j["layerwise"][0]["error_source"], "in context");
  EXPECT_EQ(j["layerwise"][1]["error_source"], "inherited");
  EXPECT_EQ(j["first_divergent_node"]["basis"], "context");
  // The ranking every rendering shares: neither fails on its own, so by error.
  const auto& worst = j["layerwise_summary"]["backends"][0]["worst"];
  ASSERT_EQ(worst.size(), 2u);
  EXPECT_EQ(worst[0]["tensor"], "c1");
  EXPECT_EQ(worst[0]["error_source"], "in context");
}

}  // namespace
}  // namespace onnxdbg
