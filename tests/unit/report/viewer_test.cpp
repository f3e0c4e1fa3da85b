// The HTML viewer's page generation: data for a small model (shapes from inference, weights
// summarised), escaping of names with <>&'" inside the embedded JSON, overlays from a run report,
// a diff (merged and side by side), lint findings and highlighted nodes, and the size bound on a
// public model.
#include "report/viewer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "diff/diff.h"
#include "lint/lint.h"
#include "model/graph.h"
#include "model/model.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

LoadedModel text_model(const std::string& text) {
  LoadedModel m;
  m.proto = testing::parse_text_model(text);
  m.path = "test.onnx";
  return m;
}

const char* kViewerModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,4] x) => (float[1,3,4] y)
<float[4,4] w = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}>
{
  mm = MatMul(x, w)
  y = Softmax<axis = 2>(mm)
}
)ONNX";

TEST(Viewer, DataHasNodesShapesAndWeightStatisticsNotValues) {
  auto m = text_model(kViewerModel);
  auto data = report::viewer_data(m);
  ASSERT_TRUE(data) << data.status().to_string();
  const auto& nodes = (*data)["nodes"];
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]["o"], "MatMul");
  EXPECT_EQ(nodes[1]["a"][0][0], "axis");
  EXPECT_EQ(nodes[1]["a"][0][2], "2");
  bool saw_mm = false, saw_w = false;
  for (const auto& t : (*data)["tensors"]) {
    if (t["n"] == "mm") {
      saw_mm = true;
      EXPECT_EQ(t["t"], "float32");
      EXPECT_EQ(t["s"], "[1, 3, 4]");  // inferred: mm has no declared type
    }
    if (t["n"] == "w") {
      saw_w = true;
      EXPECT_EQ(t["k"], "w");
      EXPECT_DOUBLE_EQ(t["w"]["max"].get<double>(), 1.0);
      EXPECT_DOUBLE_EQ(t["w"]["mean"].get<double>(), 0.25);
    }
  }
  EXPECT_TRUE(saw_mm);
  EXPECT_TRUE(saw_w);
}

// Narrow-type weights (packed int4, float8 with NaN) and inputs: their names, and statistics of
// their values (not of their codes) in the node panel's data.
TEST(Viewer, NarrowTypesHaveNamesAndDecodedStatistics) {
  auto m = text_model(R"ONNX(
<ir_version: 11, opset_import: ["" : 23]>
g (float8e4m3fn[2, 3] x) => (float[2, 3] y)
{
  xf = Cast<to = 1>(x)
  qf = Cast<to = 1>(q)
  y = Add(xf, qf)
}
)ONNX");
  Tensor q(DType::kInt4, {2, 3});
  const double qv[] = {1, -3, 7, -8, 0, 2};
  for (int i = 0; i < 6; ++i) q.set_from_double(i, qv[i]);
  *m.proto.mutable_graph()->add_initializer() = tensor_to_proto(q, "q");
  auto data = report::viewer_data(m);
  ASSERT_TRUE(data) << data.status().to_string();
  bool saw_x = false, saw_q = false;
  for (const auto& t : (*data)["tensors"]) {
    if (t["n"] == "x") {
      saw_x = true;
      EXPECT_EQ(t["t"], "float8_e4m3fn");
      EXPECT_EQ(t["s"], "[2, 3]");
    }
    if (t["n"] == "q") {
      saw_q = true;
      EXPECT_EQ(t["t"], "int4");
      EXPECT_EQ(t["w"]["dtype"], "int4");
      EXPECT_EQ(t["w"]["bytes"], 3);  // packed as stored
      EXPECT_DOUBLE_EQ(t["w"]["min"].get<double>(), -8);
      EXPECT_DOUBLE_EQ(t["w"]["max"].get<double>(), 7);
    }
  }
  EXPECT_TRUE(saw_x);
  EXPECT_TRUE(saw_q);
  EXPECT_EQ(data->dump().find("undefined"), std::string::npos);
}

// A graph input or output with an empty name (a broken export) indexed tensors[-1] (issue 17):
// the page is drawn, without a tensor for it.
TEST(Viewer, NamelessGraphInputAndOutputAreDrawnWithoutATensor) {
  auto m = text_model(kViewerModel);
  m.proto.mutable_graph()->add_input()->set_name("");
  m.proto.mutable_graph()->add_output()->set_name("");
  auto data = report::viewer_data(m);
  ASSERT_TRUE(data) << data.status().to_string();
  EXPECT_EQ((*data)["nodes"].size(), 2u);
  for (const auto& t : (*data)["tensors"]) EXPECT_NE(t["n"], "");
}

TEST(Viewer, NamesWithHtmlCharactersCannotCloseTheDataBlock) {
  auto m = text_model(kViewerModel);
  m.proto.mutable_graph()->mutable_node(0)->set_name("</script><b>&'\"");
  auto data = report::viewer_data(m);
  ASSERT_TRUE(data);
  const std::string html = report::render_viewer_html(*data);
  const size_t begin = html.find("id=\"onnxdbg-data\">");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = html.find("</script>", begin);
  const std::string block = html.substr(begin, end - begin);
  EXPECT_EQ(block.find('<', 1), std::string::npos);  // no '<' inside the JSON block at all
  EXPECT_NE(block.find("\\u003c/script\\u003e\\u003cb\\u003e\\u0026'\\\""), std::string::npos);
  // The JSON still parses back to the original name.
  const size_t json_begin = begin + std::string("id=\"onnxdbg-data\">").size();
  auto back = nlohmann::json::parse(html.substr(json_begin, end - json_begin));
  EXPECT_EQ(back["nodes"][0]["n"], "</script><b>&'\"");
}

TEST(Viewer, PageIsSelfContained) {
  auto data = report::viewer_data(text_model(kViewerModel));
  ASSERT_TRUE(data);
  const std::string html = report::render_viewer_html(*data);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org"));  // only the SVG namespace
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("sourceMappingURL"), std::string::npos);
  EXPECT_TRUE(report::viewer_has_layout_library()) << "third_party/dagre missing at build time";
}

TEST(Viewer, RunReportColoursNodesAndFindsTheFirstDivergentNode) {
  auto m = text_model(kViewerModel);
  report::ViewerOverlays ov;
  ov.run_report = nlohmann::json::parse(R"({
    "verdict": "disagree", "verdict_line": "DISAGREE",
    "comparisons": [{"output": "y", "backend": "opencv", "atol": 1e-5, "rtol": 1e-5,
                     "max_abs_error": 0.2, "max_rel_error": 0.7, "pass": false}],
    "layerwise": [
      {"tensor": "mm", "node": "", "op_type": "MatMul", "backend": "opencv", "max_abs_error": 1e-7,
       "max_rel_error": 1e-7, "own_error": 1e-7, "nan_or_inf": false, "pass": true},
      {"tensor": "y", "node": "", "op_type": "Softmax", "backend": "opencv", "max_abs_error": 0.2,
       "max_rel_error": 0.7, "own_error": 0.2, "nan_or_inf": false, "pass": false,
       "step_dtype": "float16", "max_error_steps": 410}],
    "layerwise_summary": {"backends": [{"backend": "opencv", "worst": [
      {"tensor": "y", "node": "#1", "node_index": 1, "error_source": "own"}]}]},
    "first_divergent_node": {"node": "", "op_type": "Softmax", "backend": "opencv", "tensor": "y",
                             "own_error": 0.2}})");
  auto data = report::viewer_data(m, ov);
  ASSERT_TRUE(data);
  const auto& nodes = (*data)["nodes"];
  EXPECT_DOUBLE_EQ(nodes[1]["e"]["own"].get<double>(), 0.2);
  EXPECT_FALSE(nodes[1]["e"]["pass"].get<bool>());
  EXPECT_TRUE(nodes[0]["e"]["pass"].get<bool>());
  // The error in steps of a low-precision type reaches the node panel, as in the CLI's table.
  EXPECT_DOUBLE_EQ(nodes[1]["e"]["steps"][0].get<double>(), 410);
  EXPECT_EQ(nodes[1]["e"]["steps"][1], "float16");
  EXPECT_FALSE(nodes[0]["e"].contains("steps"));
  EXPECT_EQ((*data)["report"]["first"]["index"], 1);
  // The worst nodes are the CLI's ranking (layerwise_summary), failing nodes only.
  ASSERT_EQ((*data)["report"]["worst"].size(), 1u);
  EXPECT_EQ((*data)["report"]["worst"][0]["index"], 1);
  EXPECT_EQ((*data)["report"]["worst"][0]["source"], "own");
  EXPECT_EQ((*data)["report"]["colour_basis"], "own");
  EXPECT_DOUBLE_EQ((*data)["report"]["atol"].get<double>(), 1e-5);
}

TEST(Viewer, NoFirstDivergentNodeIsGuessedWhenTheResultNamesNone) {
  // The terminal says "first divergent node: none"; the page used to name the earliest failing
  // node instead.
  auto m = text_model(kViewerModel);
  report::ViewerOverlays ov;
  ov.run_report = nlohmann::json::parse(R"({
    "verdict": "disagree", "verdict_line": "DISAGREE",
    "layerwise": [
      {"tensor": "y", "node": "", "op_type": "Softmax", "backend": "opencv", "max_abs_error": 0.2,
       "max_rel_error": 0.7, "own_error": null, "nan_or_inf": false, "pass": false}],
    "layerwise_summary": {"backends": [{"backend": "opencv", "worst": [
      {"tensor": "y", "node": "#1", "node_index": 1, "error_source": null}]}]},
    "first_divergent_node": null})");
  auto data = report::viewer_data(m, ov);
  ASSERT_TRUE(data);
  EXPECT_FALSE((*data)["report"].contains("first"));
  EXPECT_TRUE((*data)["report"]["layerwise"].get<bool>());
  EXPECT_EQ((*data)["report"]["colour_basis"], "total") << "no node was isolated";
}

TEST(Viewer, DiffMarksChangedAndAddsNodesOnlyInTheOtherModel) {
  auto a = text_model(kViewerModel);
  auto b = text_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,4] x) => (float[1,3,4] z)
<float[4,4] w = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}>
{
  mm = MatMul(x, w)
  y = Softmax<axis = 1>(mm)
  z = Relu(y)
}
)ONNX");
  auto d = diff_models(a, b);
  ASSERT_TRUE(d);
  report::ViewerOverlays ov;
  ov.diff = *d;
  ov.diff_model = Model(std::move(b));
  auto data = report::viewer_data(a, ov);
  ASSERT_TRUE(data);
  const auto& nodes = (*data)["nodes"];
  ASSERT_EQ(nodes.size(), 6u);  // A's 2, B's Relu for the merged layout, B's 3 for side by side
  EXPECT_EQ(nodes[1]["df"], "c");
  EXPECT_EQ(nodes[2]["df"], "b");
  EXPECT_EQ(nodes[2]["o"], "Relu");
  EXPECT_FALSE((*data)["diff"]["summary"].get<std::string>().empty());
}

TEST(Viewer, SideBySideDiffCarriesTheOtherModelWholeAndPairsMatches) {
  auto a = text_model(kViewerModel);
  auto b = text_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,4] x) => (float[1,3,4] z)
<float[4,4] w = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}>
{
  mm = MatMul(x, w)
  y = Softmax<axis = 1>(mm)
  z = Relu(y)
}
)ONNX");
  b.path = "other.onnx";
  auto d = diff_models(a, b);
  ASSERT_TRUE(d);
  report::ViewerOverlays ov;
  ov.diff = *d;
  ov.diff_model = Model(std::move(b));
  ov.diff_layout = report::DiffLayout::kSideBySide;
  auto data = report::viewer_data(a, ov);
  ASSERT_TRUE(data) << data.status().to_string();
  const auto& j = *data;
  EXPECT_EQ(j["diff"]["layout"], "side");
  const int64_t side = j["diff"]["side_graph"].get<int64_t>();
  ASSERT_EQ(side, 1);  // A has one graph; B's main graph follows
  EXPECT_EQ(j["graphs"][1]["parent"], -1);
  // A's 2 nodes, the merged layout's extra Relu, then B's 3 nodes in file order.
  const auto& nodes = j["nodes"];
  ASSERT_EQ(nodes.size(), 6u);
  EXPECT_EQ(nodes[2]["df"], "b");
  EXPECT_EQ(nodes[2]["g"], 0);
  for (int k = 3; k < 6; ++k) EXPECT_EQ(nodes[k]["g"], side);
  EXPECT_EQ(nodes[3]["o"], "MatMul");
  EXPECT_FALSE(nodes[3].contains("df"));  // matched and unchanged
  EXPECT_EQ(nodes[3]["p"], 0);
  EXPECT_EQ(nodes[0]["p"], 3);
  EXPECT_EQ(nodes[4]["df"], "c");  // the changed Softmax, marked on both sides
  EXPECT_EQ(nodes[1]["df"], "c");
  EXPECT_EQ(nodes[4]["p"], 1);
  EXPECT_EQ(nodes[1]["p"], 4);
  EXPECT_NE(nodes[4]["dw"][0].get<std::string>().find("axis 2 -> 1"), std::string::npos);
  EXPECT_EQ(nodes[5]["o"], "Relu");
  EXPECT_EQ(nodes[5]["df"], "b");
  // B's tensors are its own: no tensor index is shared between the two sides.
  std::set<int64_t> a_tensors, b_tensors;
  for (int k = 0; k < 6; ++k)
    for (const char* io : {"i", "u"})
      for (const auto& t : nodes[k][io])
        if (k < 2)
          a_tensors.insert(t.get<int64_t>());
        else if (k >= 3)
          b_tensors.insert(t.get<int64_t>());
  for (int64_t t : b_tensors) {
    EXPECT_EQ(a_tensors.count(t), 0u) << j["tensors"][t]["n"];
    EXPECT_LT(t, static_cast<int64_t>(j["tensors"].size()));
  }
  EXPECT_EQ(j["tensors"][nodes[5]["u"][0].get<int64_t>()]["k"], "out");  // B's output z

  ov.diff_layout = report::DiffLayout::kMerged;
  auto merged = report::viewer_data(a, ov);
  ASSERT_TRUE(merged);
  EXPECT_EQ((*merged)["diff"]["layout"], "merged");
}

TEST(Viewer, HighlightMarksNodesByNameOrLabelInTheOrderGiven) {
  auto m = text_model(kViewerModel);
  m.proto.mutable_graph()->mutable_node(1)->set_name("soft");
  report::ViewerOverlays ov;
  ov.highlight = report::HighlightOverlay{
      "reduced model", "2 of 2 nodes still fail", {"soft", "#0 MatMul", "soft"}};
  auto data = report::viewer_data(m, ov);
  ASSERT_TRUE(data) << data.status().to_string();
  const auto& h = (*data)["highlight"];
  EXPECT_EQ(h["title"], "reduced model");
  EXPECT_EQ(h["summary"], "2 of 2 nodes still fail");
  EXPECT_EQ(h["nodes"], nlohmann::json::parse("[1, 0]"));  // order given, duplicate dropped
  EXPECT_EQ((*data)["nodes"][0]["h"], 1);
  EXPECT_EQ((*data)["nodes"][1]["h"], 1);
  // The page carries it: parse the data block back out of the HTML.
  const std::string html = report::render_viewer_html(*data);
  const std::string tag = "id=\"onnxdbg-data\">";
  const size_t begin = html.find(tag) + tag.size();
  auto back = nlohmann::json::parse(html.substr(begin, html.find("</script>", begin) - begin));
  EXPECT_EQ(back["highlight"], h);
  EXPECT_NE(html.find("highlight-list"), std::string::npos);  // the page script draws the list
}

TEST(Viewer, HighlightTakesNodeLabelsAsReducePrintsThem) {
  auto m = text_model(kViewerModel);
  m.proto.mutable_graph()->mutable_node(1)->set_name("soft");
  report::ViewerOverlays ov;
  // node_label of each: the named Softmax with its name, the unnamed MatMul without.
  ov.highlight = report::HighlightOverlay{
      "", "", {node_label(m.proto.graph().node(1), 1), node_label(m.proto.graph().node(0), 0)}};
  ASSERT_EQ(ov.highlight->nodes[0], "#1 Softmax 'soft'");
  auto data = report::viewer_data(m, ov);
  ASSERT_TRUE(data) << data.status().to_string();
  EXPECT_EQ((*data)["highlight"]["nodes"], nlohmann::json::parse("[1, 0]"));
  EXPECT_EQ((*data)["nodes"][1]["x"], 1);  // the index in its graph, for the page's labels
  // A label whose name or op type disagrees with the node at that index is no node.
  for (const std::string bad : {"#1 Softmax 'other'", "#1 Relu 'soft'"}) {
    ov.highlight = report::HighlightOverlay{"", "", {bad}};
    auto wrong = report::viewer_data(m, ov);
    ASSERT_FALSE(wrong) << bad;
    EXPECT_EQ(wrong.status().message(),
              "highlighted node '" + bad + "' is not a node of test.onnx");
  }
}

TEST(Viewer, HighlightOfAnUnknownNodeIsOneClearError) {
  auto m = text_model(kViewerModel);
  for (const std::string bad : {"nope", "#1 MatMul", "#7 Relu"}) {
    report::ViewerOverlays ov;
    ov.highlight = report::HighlightOverlay{"", "", {"#0 MatMul", bad}};
    auto data = report::viewer_data(m, ov);
    ASSERT_FALSE(data) << bad;
    EXPECT_EQ(data.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(data.status().message(), "highlighted node '" + bad + "' is not a node of test.onnx");
  }
}

TEST(Viewer, HighlightFindsSubgraphNodes) {
  auto m = text_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] x) => (float[2] y)
{
  y = If(c) <then_branch = t () => (float[2] a) { a = Relu(x) },
             else_branch = e () => (float[2] b) { b = Neg(x) }>
}
)ONNX");
  m.proto.mutable_graph()
      ->mutable_node(0)
      ->mutable_attribute(1)
      ->mutable_g()
      ->mutable_node(0)
      ->set_name("inner_neg");
  const std::string which = m.proto.graph().node(0).attribute(1).name();
  report::ViewerOverlays ov;
  ov.highlight = report::HighlightOverlay{"", "", {"inner_neg"}};
  auto data = report::viewer_data(m, ov);
  ASSERT_TRUE(data) << data.status().to_string();
  const int64_t n = (*data)["highlight"]["nodes"][0].get<int64_t>();
  EXPECT_EQ((*data)["nodes"][n]["o"], which == "else_branch" ? "Neg" : "Relu");
  EXPECT_NE((*data)["nodes"][n]["g"], 0);
  EXPECT_EQ((*data)["highlight"]["title"], "highlighted nodes");
}

TEST(Viewer, LintFindingsLandOnTheirNodes) {
  auto m = text_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y)
{
  y = Relu(x)
  dead = Neg(x)
}
)ONNX");
  report::ViewerOverlays ov;
  auto f = lint::lint_model(m);
  ASSERT_TRUE(f);
  ov.lint = *f;
  auto data = report::viewer_data(m, ov);
  ASSERT_TRUE(data);
  ASSERT_TRUE((*data)["nodes"][1].contains("l"));
  EXPECT_EQ((*data)["nodes"][1]["l"][0][1], "dead_node");
}

TEST(Viewer, PublicDetectorPageStaysUnderFiveMegabytes) {
  const char* dir = std::getenv("ONNXDBG_MODELS");
  const std::filesystem::path p =
      std::filesystem::path(dir ? dir : "") / "ch_PP-OCRv4_det_infer.onnx";
  if (!dir || !std::filesystem::exists(p)) GTEST_SKIP() << "public models not fetched";
  auto m = load_model(p);
  ASSERT_TRUE(m);
  auto data = report::viewer_data(*m);
  ASSERT_TRUE(data);
  EXPECT_EQ((*data)["nodes"].size(), 672u);
  EXPECT_LT(report::render_viewer_html(*data).size(), 5u * 1000 * 1000);
}

}  // namespace
}  // namespace onnxdbg
