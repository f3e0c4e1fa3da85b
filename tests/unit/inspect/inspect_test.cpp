// Tests of summarize_model and its renderings on a small model with an If (two subgraphs, one
// holding a nested If), a Constant, and an initializer holding NaN and Inf.
#include "inspect/inspect.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "../test_util.h"
#include "model/model.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

constexpr const char* kInspectModel = R"(
  <ir_version: 8, opset_import: ["" : 13], producer_name: "inspect_test", producer_version: "1.0">
  main (float[batch, 3] x, bool cond) => (float[batch, 3] y, float[batch, 3] z) <float[4] w = {1.0, 2.0, 3.0, 4.0}> {
    c = Constant <value = float[2] {0.5, -1.5}> ()
    k = Constant <value_int = 3> ()
    s = Add(x, x)
    t = Mul(s, s)
    y = If(cond) <
      then_branch = then_g () => (float[batch, 3] a) { a = Relu(t) },
      else_branch = else_g () => (float[batch, 3] b) {
        b0 = Neg(t)
        b = If(cond) < then_branch = inner_then () => (float[batch, 3] d) { d = Abs(b0) },
                       else_branch = inner_else () => (float[batch, 3] e) { e = Identity(b0) } >
      }
    >
    z = Relu(t)
  }
)";

LoadedModel loaded_inspect_model() {
  LoadedModel m;
  m.proto = testing::parse_text_model(kInspectModel);
  // w = {1, NaN, 3, Inf}: the text format has no NaN literal.
  auto* w = m.proto.mutable_graph()->mutable_initializer(0);
  w->set_float_data(1, std::numeric_limits<float>::quiet_NaN());
  w->set_float_data(3, std::numeric_limits<float>::infinity());
  m.base_dir = ".";
  return m;
}

TEST(Inspect, BasicSummary) {
  auto s = summarize_model(loaded_inspect_model());
  ASSERT_TRUE(s.has_value()) << s.status().to_string();
  EXPECT_EQ(s->ir_version, 8);
  EXPECT_EQ(s->producer_name, "inspect_test");
  EXPECT_EQ(s->producer_version, "1.0");
  ASSERT_EQ(s->opset_imports.size(), 1u);
  EXPECT_EQ(s->opset_imports[0], std::make_pair(std::string("ai.onnx"), int64_t{13}));
  ASSERT_EQ(s->inputs.size(), 2u);
  EXPECT_EQ(s->inputs[0].name, "x");
  EXPECT_EQ(s->inputs[0].type, "float32");
  EXPECT_EQ(s->inputs[0].dims, (std::vector<std::string>{"batch", "3"}));
  EXPECT_EQ(s->inputs[0].dim_values, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(s->inputs[1].type, "bool");
  EXPECT_TRUE(s->inputs[1].dims.empty());
  ASSERT_EQ(s->outputs.size(), 2u);
  EXPECT_EQ(s->initializer_count, 1);
  EXPECT_EQ(s->initializer_bytes, 16u);
  EXPECT_EQ(s->constant_count, 2);
  EXPECT_EQ(s->constant_bytes, 8u);  // the value_int Constant has no `value` tensor
  EXPECT_EQ(s->node_count, 6);
  EXPECT_EQ(s->node_count_with_subgraphs, 6 + 1 + 2 + 1 + 1);
  EXPECT_EQ(s->subgraph_count, 4);
  EXPECT_TRUE(s->graph.nodes.empty()) << "basic mode lists no nodes";
  EXPECT_TRUE(s->weights.empty());
}

TEST(Inspect, HistogramSortedByCountThenName) {
  auto s = summarize_model(loaded_inspect_model());
  ASSERT_TRUE(s.has_value());
  std::vector<std::pair<std::string, int64_t>> h;
  for (const auto& o : s->op_histogram) h.emplace_back(o.op_type, o.count);
  const std::vector<std::pair<std::string, int64_t>> want = {
      {"Constant", 2}, {"If", 2},       {"Relu", 2}, {"Abs", 1},
      {"Add", 1},      {"Identity", 1}, {"Mul", 1},  {"Neg", 1}};
  EXPECT_EQ(h, want);
}

TEST(Inspect, LayersNestSubgraphsUnderTheirNode) {
  auto s = summarize_model(loaded_inspect_model(), *inspect_options_from_mode("layers"));
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->graph.nodes.size(), 6u);
  const NodeSummary& if_node = s->graph.nodes[4];
  EXPECT_EQ(if_node.op_type, "If");
  EXPECT_EQ(if_node.index, 4);
  EXPECT_EQ(if_node.inputs, (std::vector<std::string>{"cond"}));
  EXPECT_EQ(if_node.outputs, (std::vector<std::string>{"y"}));
  ASSERT_EQ(if_node.subgraphs.size(), 2u);
  EXPECT_EQ(if_node.subgraphs[0].attribute, "then_branch");
  const GraphSummary& else_g = if_node.subgraphs[1].graph.front();
  EXPECT_EQ(else_g.name, "else_g");
  ASSERT_EQ(else_g.nodes.size(), 2u);
  ASSERT_EQ(else_g.nodes[1].subgraphs.size(), 2u);
  EXPECT_EQ(else_g.nodes[1].subgraphs[0].graph.front().nodes.at(0).op_type, "Abs");
  EXPECT_TRUE(if_node.attributes.empty()) << "layers mode lists no attributes";

  const std::string text = render_summary_text(*s);
  EXPECT_NE(text.find("else_branch: graph 'else_g' (2 nodes)"), std::string::npos) << text;
  // The nested If's subgraph is indented deeper than its parent's.
  const size_t outer = text.find("else_branch: graph 'else_g'");
  const size_t inner = text.find("then_branch: graph 'inner_then'");
  ASSERT_NE(inner, std::string::npos);
  auto column = [&](size_t pos) { return pos - text.rfind('\n', pos) - 1; };
  EXPECT_GT(column(inner), column(outer));
  EXPECT_NE(text.find("Add       x, x -> s"), std::string::npos) << text;
}

TEST(Inspect, AttributesAreSummarised) {
  auto s = summarize_model(loaded_inspect_model(), *inspect_options_from_mode("attrs"));
  ASSERT_TRUE(s.has_value());
  const auto& c = s->graph.nodes[0];
  ASSERT_EQ(c.attributes.size(), 1u);
  EXPECT_EQ(c.attributes[0].name, "value");
  EXPECT_EQ(c.attributes[0].type, "tensor");
  EXPECT_EQ(c.attributes[0].value, "float32 [2]");
  EXPECT_EQ(s->graph.nodes[1].attributes[0].value, "3");
  const auto& if_attrs = s->graph.nodes[4].attributes;
  ASSERT_EQ(if_attrs.size(), 2u);
  EXPECT_EQ(if_attrs[0].type, "graph");
  EXPECT_EQ(if_attrs[0].value, "<subgraph 1 nodes>");
  EXPECT_EQ(if_attrs[1].value, "<subgraph 2 nodes>");
  const std::string text = render_summary_text(*s);
  EXPECT_NE(text.find("value = float32 [2]"), std::string::npos) << text;
}

TEST(Inspect, WeightStatisticsCountNaNAndInf) {
  auto s = summarize_model(loaded_inspect_model(), *inspect_options_from_mode("weights"));
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->weights.size(), 2u);
  const WeightSummary& w = s->weights[0];
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(w.source, "initializer");
  EXPECT_EQ(w.dtype, DType::kFloat);
  EXPECT_EQ(w.shape, (Shape{4}));
  EXPECT_EQ(w.bytes, 16u);
  EXPECT_EQ(w.nan_count, 1);
  EXPECT_EQ(w.inf_count, 1);
  ASSERT_TRUE(w.has_stats);
  EXPECT_DOUBLE_EQ(w.min, 1);
  EXPECT_DOUBLE_EQ(w.max, 3);
  EXPECT_DOUBLE_EQ(w.mean, 2);
  EXPECT_DOUBLE_EQ(w.std, 1);
  const WeightSummary& c = s->weights[1];
  EXPECT_EQ(c.name, "c");
  EXPECT_EQ(c.source, "Constant");
  EXPECT_DOUBLE_EQ(c.min, -1.5);
  EXPECT_DOUBLE_EQ(c.max, 0.5);
  EXPECT_EQ(c.nan_count, 0);

  const std::string text = render_summary_text(*s);
  EXPECT_NE(text.find("Initializer weights (1)"), std::string::npos) << text;
  EXPECT_NE(text.find("Constant weights (1)"), std::string::npos) << text;
}

TEST(Inspect, JsonKeys) {
  auto s = summarize_model(loaded_inspect_model(), *inspect_options_from_mode("attrs"));
  ASSERT_TRUE(s.has_value());
  const nlohmann::json j = summary_to_json(*s);
  for (const char* key :
       {"file", "ir_version", "producer", "opset_imports", "inputs", "outputs", "initializers",
        "constants", "nodes", "op_histogram", "warnings", "mode", "graph"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_FALSE(j.contains("weights"));
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json::parse(R"(["batch", 3])"));
  EXPECT_EQ(j["op_histogram"][0]["op_type"], "Constant");
  EXPECT_EQ(j["nodes"]["count_with_subgraphs"], 11);
  EXPECT_EQ(
      j["graph"]["nodes"][4]["subgraphs"][1]["graph"]["nodes"][1]["subgraphs"][0]["attribute"],
      "then_branch");
  EXPECT_EQ(j["graph"]["nodes"][0]["attributes"][0]["value"], "float32 [2]");

  auto w = summarize_model(loaded_inspect_model(), *inspect_options_from_mode("weights"));
  const nlohmann::json jw = summary_to_json(*w);
  ASSERT_TRUE(jw.contains("weights"));
  EXPECT_EQ(jw["weights"][0]["nan_count"], 1);
  EXPECT_EQ(jw["weights"][0]["min"], 1.0);
  EXPECT_FALSE(jw.contains("graph"));
  // NaN-free: the dump must be valid JSON that parses back.
  EXPECT_EQ(nlohmann::json::parse(jw.dump()), jw);
}

TEST(Inspect, ModesAndFileSize) {
  EXPECT_FALSE(inspect_options_from_mode("full").has_value());
  const TempDir dir = testing::make_temp_dir("onnxdbg_inspect_test_");
  const fs::path p = dir.path() / "model.onnx";
  ASSERT_TRUE(save_model(loaded_inspect_model().proto, p).is_ok());
  auto m = load_model(p);
  ASSERT_TRUE(m.has_value());
  auto s = summarize_model(*m);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->file_size, fs::file_size(p));
  EXPECT_EQ(s->file_name, p.filename().string());
  const std::string text = render_summary_text(*s);
  EXPECT_NE(text.find("x     float32  [batch, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("Producer      inspect_test 1.0"), std::string::npos) << text;
  for (size_t a = 0, b; (b = text.find('\n', a)) != std::string::npos; a = b + 1)
    EXPECT_LE(b - a, 100u) << text.substr(a, b - a);
}

// A model with narrow-type weights (built with onnxdbg's own tensor_to_proto: packed int4, a
// float8 initializer with NaN, a float8 E5M2 Constant with an infinity) and narrow graph inputs.
LoadedModel narrow_model() {
  LoadedModel m;
  m.proto = testing::parse_text_model(R"(
    <ir_version: 11, opset_import: ["" : 23]>
    main (float8e4m3fn[4] x, int4[2, 3] q_in) => (float8e4m3fn[4] y, int4[2, 3] q_out) {
      e = Constant <value = float[1] {0.0}> ()
      y = Identity(x)
      q_out = Identity(q_in)
    }
  )");
  Tensor q(DType::kInt4, {2, 3});
  const double qv[] = {1, -3, 7, -8, 0, 2};
  for (int i = 0; i < 6; ++i) q.set_from_double(i, qv[i]);
  Tensor f(DType::kFloat8E4M3FN, {4});
  const double fv[] = {0.5, -1.75, 448, std::numeric_limits<double>::quiet_NaN()};
  for (int i = 0; i < 4; ++i) f.set_from_double(i, fv[i]);
  Tensor e(DType::kFloat8E5M2, {3});
  e.set_from_double(0, -2);
  e.set_from_double(1, 1.5);
  e.raw()[2] = std::byte{0x7c};  // +infinity (set_from_double saturates to 57344)
  auto* g = m.proto.mutable_graph();
  *g->add_initializer() = tensor_to_proto(q, "q");
  *g->add_initializer() = tensor_to_proto(f, "f");
  *g->mutable_node(0)->mutable_attribute(0)->mutable_t() = tensor_to_proto(e);
  m.base_dir = ".";
  return m;
}

TEST(Inspect, NarrowTypesShowTheirNamesAndDecodedStatistics) {
  auto s = summarize_model(narrow_model(), *inspect_options_from_mode("weights"));
  ASSERT_TRUE(s.has_value()) << s.status().to_string();
  EXPECT_EQ(s->inputs[0].type, "float8_e4m3fn");
  EXPECT_EQ(s->inputs[1].type, "int4");
  EXPECT_EQ(s->initializer_bytes, 3u + 4u);  // six int4 packed in 3 bytes, four float8
  ASSERT_EQ(s->weights.size(), 3u);
  const WeightSummary& q = s->weights[0];
  EXPECT_EQ(q.dtype, DType::kInt4);
  EXPECT_EQ(q.bytes, 3u);
  ASSERT_TRUE(q.has_stats) << q.error;
  EXPECT_DOUBLE_EQ(q.min, -8);  // values, not codes (-3 is the code 13)
  EXPECT_DOUBLE_EQ(q.max, 7);
  EXPECT_DOUBLE_EQ(q.mean, -1.0 / 6);
  const WeightSummary& f = s->weights[1];
  EXPECT_EQ(f.dtype, DType::kFloat8E4M3FN);
  EXPECT_EQ(f.nan_count, 1);
  EXPECT_DOUBLE_EQ(f.min, -1.75);
  EXPECT_DOUBLE_EQ(f.max, 448);
  const WeightSummary& c = s->weights[2];
  EXPECT_EQ(c.source, "Constant");
  EXPECT_EQ(c.dtype, DType::kFloat8E5M2);
  EXPECT_EQ(c.inf_count, 1);
  EXPECT_DOUBLE_EQ(c.min, -2);
  EXPECT_DOUBLE_EQ(c.max, 1.5);

  const std::string text = render_summary_text(*s);
  EXPECT_EQ(text.find("undefined"), std::string::npos) << text;
  EXPECT_NE(text.find("float8_e4m3fn"), std::string::npos) << text;
  EXPECT_NE(text.find("float8_e5m2"), std::string::npos) << text;
  EXPECT_NE(text.find("int4"), std::string::npos) << text;
  EXPECT_NE(text.find("448"), std::string::npos) << text;
  const nlohmann::json j = summary_to_json(*s);
  EXPECT_EQ(j["weights"][0]["dtype"], "int4");
  EXPECT_EQ(j["weights"][0]["min"], -8.0);
  EXPECT_EQ(j["weights"][2]["dtype"], "float8_e5m2");
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);

  auto attrs = summarize_model(narrow_model(), *inspect_options_from_mode("attrs"));
  ASSERT_TRUE(attrs.has_value());
  EXPECT_EQ(summary_to_json(*attrs)["graph"]["nodes"][0]["attributes"][0]["value"],
            "float8_e5m2 [3]");
}

}  // namespace
}  // namespace onnxdbg

namespace onnxdbg {
namespace {

// `inspect --show-tensors`: every main-graph tensor with its inferred type, symbolic dims by
// name, and its producer; the text and JSON say the same.
TEST(Inspect, ShowTensorsListsInferredTypesAndShapes) {
  InspectOptions o;
  o.tensors = true;
  auto s = summarize_model(loaded_inspect_model(), o);
  ASSERT_TRUE(s.has_value()) << s.status().to_string();
  EXPECT_TRUE(s->tensors_error.empty()) << s->tensors_error;
  std::map<std::string, TensorSummary> by_name;
  for (const auto& t : s->tensors) by_name[t.value.name] = t;
  ASSERT_TRUE(by_name.count("x") && by_name.count("w") && by_name.count("s") &&
              by_name.count("c") && by_name.count("k") && by_name.count("y"));
  EXPECT_EQ(by_name["x"].producer, "graph input");
  EXPECT_EQ(by_name["w"].producer, "initializer");
  EXPECT_EQ(by_name["w"].value.dims, (std::vector<std::string>{"4"}));
  // Add(x, x) of float[batch, 3]: inferred, the symbolic dim kept by name.
  EXPECT_EQ(by_name["s"].value.type, "float32");
  EXPECT_EQ(by_name["s"].value.dims, (std::vector<std::string>{"batch", "3"}));
  EXPECT_NE(by_name["s"].producer.find("Add"), std::string::npos) << by_name["s"].producer;
  EXPECT_EQ(by_name["c"].value.dims, (std::vector<std::string>{"2"}));
  EXPECT_EQ(by_name["k"].value.type, "int64");
  EXPECT_TRUE(by_name["k"].value.has_shape);
  EXPECT_TRUE(by_name["k"].value.dims.empty());   // a scalar
  EXPECT_EQ(s->tensors.front().value.name, "x");  // inputs first, then initializers, then nodes

  const std::string text = render_summary_text(*s);
  EXPECT_NE(text.find("Tensors ("), std::string::npos);
  EXPECT_NE(text.find("[batch, 3]"), std::string::npos) << text;
  const auto j = summary_to_json(*s);
  ASSERT_TRUE(j.contains("tensors"));
  EXPECT_EQ(j["tensors"].size(), s->tensors.size());
  EXPECT_TRUE(j["mode"]["tensors"].get<bool>());
  bool found = false;
  for (const auto& t : j["tensors"])
    if (t["name"] == "s") {
      found = true;
      EXPECT_EQ(t["shape"][0], "batch");
      EXPECT_EQ(t["shape"][1], 3);
    }
  EXPECT_TRUE(found);
  // Without the option nothing is inferred or listed.
  auto plain = summarize_model(loaded_inspect_model());
  ASSERT_TRUE(plain.has_value());
  EXPECT_TRUE(plain->tensors.empty());
  EXPECT_FALSE(summary_to_json(*plain).contains("tensors"));
}

}  // namespace
}  // namespace onnxdbg
