// Tests for lint rules: one small text-format model per rule (edited as protobuf where the text
// parser would refuse the broken structure) that the rule must find, and a clean model that must
// produce no errors.
#include "lint/lint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "lint/lint_test_util.h"
#include "report/lint_report.h"
#include "test_util.h"

namespace onnxdbg::lint {
namespace {

using lint_testing::errors;
using lint_testing::of_rule;

using onnxdbg::testing::parse_text_model;

std::vector<Finding> lint_proto(const onnx::ModelProto& m, const LintOptions& opt = {}) {
  LoadedModel lm;
  lm.proto = m;
  auto r = lint_model(lm, opt);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.status().to_string());
  return r ? *r : std::vector<Finding>{};
}

std::string dump(const std::vector<Finding>& fs) {
  std::string s;
  for (const auto& f : fs)
    s += std::string(severity_name(f.severity)) + " " + f.rule + " [" + f.graph + " #" +
         std::to_string(f.node_index) + " " + f.op_type + " '" + f.node + "'] " + f.message + "\n";
  return s;
}

const char* kClean = R"(
<ir_version: 8, opset_import: ["" : 13]>
clean (float[1,3] x) => (float[1,3] y) <float[1,3] w = {1.0, 2.0, 3.0}> {
  a = Add(x, w)
  y = Relu(a)
})";

TEST(Lint, CleanModelHasNoFindingsAboveInfo) {
  auto m = parse_text_model(kClean);
  for (int i = 0; i < m.graph().node_size(); ++i)
    m.mutable_graph()->mutable_node(i)->set_name("n" + std::to_string(i));
  auto fs = lint_proto(m);
  EXPECT_EQ(count_findings(fs).error, 0) << dump(fs);
  EXPECT_EQ(count_findings(fs).warning, 0) << dump(fs);
}

TEST(Lint, RuleNamesMatchRegistryAndUnknownRuleIsRefused) {
  // The registry is rules.def: one name per ODB_LINT_RULE line, kStructural where it says so.
  std::ifstream def(std::string(ONNXDBG_SOURCE_DIR) + "/src/lint/rules/rules.def");
  ASSERT_TRUE(def.good());
  size_t lines = 0, structural_lines = 0;
  for (std::string line; std::getline(def, line);)
    if (line.rfind("ODB_LINT_RULE(", 0) == 0) {
      ++lines;
      structural_lines += line.find("kStructural") != std::string::npos;
    }
  auto names = rule_names();
  EXPECT_EQ(names.size(), lines);
  EXPECT_GE(names.size(), 26u);
  EXPECT_NE(std::find(names.begin(), names.end(), "undefined_input"), names.end());
  // rules.def says which rules stop `run`: the checker's own rule does not (it also refuses what
  // runtimes accept), issue 39's new rules do.
  const auto structural = structural_rule_names();
  EXPECT_EQ(structural.size(), structural_lines);
  for (const char* r : {"function_calls", "sparse_initializer", "unnamed_value", "undefined_input"})
    EXPECT_NE(std::find(structural.begin(), structural.end(), r), structural.end()) << r;
  EXPECT_EQ(std::find(structural.begin(), structural.end(), "onnx_checker"), structural.end());
  LoadedModel lm;
  lm.proto = parse_text_model(kClean);
  LintOptions opt;
  opt.disabled_rules = {"no_such_rule"};
  auto r = lint_model(lm, opt);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
}

TEST(Lint, OnnxCheckerReportsItsFirstError) {
  auto m = parse_text_model(kClean);
  m.mutable_graph()->mutable_node()->SwapElements(0, 1);  // Relu before the Add it reads
  auto fs = of_rule(lint_proto(m), "onnx_checker");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::kError);
  EXPECT_NE(fs[0].message.find("ONNX checker"), std::string::npos) << fs[0].message;
  EXPECT_NE(fs[0].message.find("topologically sorted"), std::string::npos) << fs[0].message;
}

TEST(Lint, ShapeInferenceSurvivesShapeOfUntypedValues) {
  // ONNX 1.12's data propagation crashes on Shape of a value without a type: after a custom op,
  // an undefined name, or a node whose inference failed. Lint must not.
  auto fs = lint_proto(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 15, "com.x" : 1]>
g (float[3,4] x, float[5,6] w) => (int64[2] a, int64[2] b, int64[2] c) {
  z = com.x.Foo(x)
  a = Shape(z)
  b = Shape(undefined)
  bad = Add(x, w)
  c = Shape(bad)
})"));
  EXPECT_EQ(of_rule(fs, "undefined_input").size(), 1u) << dump(fs);
  auto fs2 = lint_proto(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[3,4] x, float[5,6] w) => (int64[2] c, float[3,4] r) {
  bad = Add(x, w)
  c = Shape(bad)
  r = Relu(bad)
})"));
  auto si = of_rule(fs2, "shape_inference");
  ASSERT_EQ(si.size(), 1u) << dump(fs2);  // the Add; not its echoes downstream
  EXPECT_EQ(si[0].op_type, "Add");
}

TEST(Lint, ShapeInferenceFindsIncompatibleShapes) {
  auto fs = lint_proto(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x, float[4,5] y) => (float[2,3] z) {
  z = Add(x, y)
})"));
  auto si = of_rule(fs, "shape_inference");
  ASSERT_EQ(si.size(), 1u) << dump(fs);
  EXPECT_EQ(si[0].node_index, 0);
  EXPECT_EQ(si[0].op_type, "Add");
  EXPECT_EQ(si[0].severity, Severity::kError);
  EXPECT_NE(si[0].message.find("Incompatible dimensions"), std::string::npos) << si[0].message;
}

TEST(Lint, UndefinedInputSuggestsClosestName) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x_1) => (float[2] y) {
  y = Relu(x_1)
})");
  // PyTorch-style names the text parser does not accept: input 'x.1', node reading 'x1'.
  m.mutable_graph()->mutable_input(0)->set_name("x.1");
  m.mutable_graph()->mutable_node(0)->set_input(0, "x1");
  m.mutable_graph()->mutable_node(0)->set_name("relu");
  auto fs = lint_proto(m);
  auto u = of_rule(fs, "undefined_input");
  ASSERT_EQ(u.size(), 1u) << dump(fs);
  EXPECT_EQ(u[0].node, "relu");
  EXPECT_EQ(u[0].severity, Severity::kError);
  EXPECT_NE(u[0].message.find("did you mean 'x.1'?"), std::string::npos) << u[0].message;
}

TEST(Lint, MissingGraphOutputNamesNearestProducers) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] feat_3) {
  feat_1 = Relu(x)
  feat_2 = Relu(feat_1)
  feat_3 = Relu(feat_2)
})");
  m.mutable_graph()->mutable_node()->RemoveLast();  // truncated
  auto fs = lint_proto(m);
  auto f = of_rule(fs, "missing_graph_output");
  ASSERT_EQ(f.size(), 1u) << dump(fs);
  EXPECT_EQ(f[0].node_index, -1);
  EXPECT_NE(f[0].message.find("'feat_3'"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("'feat_2' from node #1 Relu"), std::string::npos) << f[0].message;
}

TEST(Lint, UseBeforeDefinitionListsEveryViolation) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int64[2] a, int64[2] b) => (float[2] y) {
  fa = Cast<to = 1>(a)
  fb = Cast<to = 1>(b)
  y = Add(fa, fb)
})");
  // Move both Casts after their user, as some exporters do.
  auto* nodes = m.mutable_graph()->mutable_node();
  nodes->SwapElements(0, 2);  // Add, Cast b, Cast a
  auto fs = lint_proto(m);
  auto u = of_rule(fs, "use_before_definition");
  ASSERT_EQ(u.size(), 2u) << dump(fs);
  EXPECT_EQ(u[0].op_type, "Add");
  EXPECT_NE(u[0].message.find("'fa'"), std::string::npos);
  EXPECT_NE(u[1].message.find("'fb'"), std::string::npos);
  EXPECT_NE(u[0].message.find("topological order"), std::string::npos) << u[0].message;
}

TEST(Lint, DuplicateOutputFound) {
  auto fs = lint_proto(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  y = Relu(x)
  y = Neg(x)
})"));
  auto d = of_rule(fs, "duplicate_output");
  ASSERT_EQ(d.size(), 1u) << dump(fs);
  EXPECT_EQ(d[0].node_index, 1);
  EXPECT_EQ(d[0].severity, Severity::kError);
}

TEST(Lint, DeadNodeIsInfo) {
  auto fs = lint_proto(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  t = Neg(x)
  u = Abs(t)
  y = Relu(x)
})"));
  auto d = of_rule(fs, "dead_node");
  ASSERT_EQ(d.size(), 2u) << dump(fs);
  EXPECT_EQ(d[0].severity, Severity::kInfo);
  EXPECT_EQ(d[0].node_index, 0);
  EXPECT_NE(d[0].message.find("only other dead nodes"), std::string::npos) << d[0].message;
  EXPECT_NE(d[1].message.find("nothing uses"), std::string::npos) << d[1].message;
  EXPECT_EQ(errors(fs), 0) << dump(fs);
}

TEST(Lint, UnusedInitializerAndInputAreWarnings) {
  auto fs = lint_proto(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x, float[2] extra) => (float[2] y) <float[2] w = {1.0, 2.0}> {
  y = Relu(x)
})"));
  auto i = of_rule(fs, "unused_initializer");
  ASSERT_EQ(i.size(), 1u) << dump(fs);
  EXPECT_EQ(i[0].severity, Severity::kWarning);
  EXPECT_NE(i[0].message.find("'w'"), std::string::npos);
  auto u = of_rule(fs, "unused_input");
  ASSERT_EQ(u.size(), 1u) << dump(fs);
  EXPECT_NE(u[0].message.find("'extra'"), std::string::npos);
  EXPECT_EQ(errors(fs), 0) << dump(fs);
}

TEST(Lint, InitializerShadowingInputDependsOnIrVersion) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x, float[2] w) => (float[2] y) <float[2] w = {1.0, 2.0}> {
  y = Add(x, w)
})");
  auto fs = of_rule(lint_proto(m), "initializer_shadows_input");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::kInfo);
  // IR 3 requires every initializer to be a graph input: drop 'w' from the inputs.
  m.set_ir_version(3);
  m.mutable_graph()->mutable_input()->RemoveLast();
  fs = of_rule(lint_proto(m), "initializer_shadows_input");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::kError);
  EXPECT_NE(fs[0].message.find("'w'"), std::string::npos);
}

TEST(Lint, UnknownOpHintsAndCustomDomainInfo) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13, "com.example" : 1]>
g (float[2] x) => (float[2] y, float[2] z) {
  y = Relux(x)
  z = com.example.Fancy(x)
})");
  auto fs = lint_proto(m);
  auto u = of_rule(fs, "unknown_op");
  ASSERT_EQ(u.size(), 2u) << dump(fs);
  EXPECT_EQ(u[0].severity, Severity::kInfo);  // model-level custom domain info sorts first
  EXPECT_NE(u[0].message.find("com.example"), std::string::npos);
  EXPECT_EQ(u[1].severity, Severity::kError);
  EXPECT_NE(u[1].message.find("did you mean 'Relu'?"), std::string::npos) << u[1].message;
}

// tf2onnx at opset 9 on tf.math.cumsum: it logs "Tensorflow op [...Cumsum] is not supported" and
// writes the node under its TensorFlow type. lint names ONNX's CumSum, the opset that has it and
// the re-convert command, once (unconverted_op, not also unknown_op's spelling hint).
TEST(Lint, UnconvertedTensorFlowOpNamesTheOnnxOpTheOpsetAndTheCommand) {
  auto m = parse_text_model(R"(
<ir_version: 4, opset_import: ["" : 9], producer_name: "tf2onnx">
g (float[2,3] x) => (float[2,3] y, float[2,3] z) {
  y = Cumsum(x, axis)
  axis = Constant<value = int32[1] {1}>()
  z = Relu(x)
})");
  auto fs = lint_proto(m);
  auto u = of_rule(fs, "unconverted_op");
  ASSERT_EQ(u.size(), 1u) << dump(fs);
  EXPECT_EQ(u[0].severity, Severity::kError);
  EXPECT_EQ(u[0].op_type, "Cumsum");
  for (const char* part :
       {"ONNX's counterpart is CumSum, from opset 11", "this model imports opset 9",
        "python -m tf2onnx.convert ... --opset 11"})
    EXPECT_NE(u[0].message.find(part), std::string::npos) << part << "\n" << u[0].message;
  EXPECT_TRUE(of_rule(fs, "unknown_op").empty()) << dump(fs);
  // At an opset that has CumSum, the converter failed on the node itself: its log says why.
  m.mutable_opset_import(0)->set_version(13);
  auto at13 = of_rule(lint_proto(m), "unconverted_op");
  ASSERT_EQ(at13.size(), 1u);
  EXPECT_NE(at13[0].message.find("which this model's opset 13 has"), std::string::npos)
      << at13[0].message;
}

// CumSum (an ONNX op) under opset 9 in a PyTorch export: the fix is exporting again at 11.
TEST(Lint, AConvertersOpTooNewForItsOpsetNamesTheReExport) {
  auto fs = lint_proto(parse_text_model(R"(
<ir_version: 4, opset_import: ["" : 9], producer_name: "pytorch">
g (float[2,3] x, int64 axis) => (float[2,3] y) {
  y = CumSum(x, axis)
})"));
  auto o = of_rule(fs, "op_not_in_opset");
  ASSERT_EQ(o.size(), 1u) << dump(fs);
  EXPECT_NE(o[0].message.find("torch.onnx.export(..., opset_version=11)"), std::string::npos)
      << o[0].message;
}

TEST(Lint, OpNotInOpsetSaysWhereItWasIntroduced) {
  auto fs = lint_proto(parse_text_model(R"(
<ir_version: 6, opset_import: ["" : 11]>
g (float[1,1,4,4] x, float[1,4,4,2] grid) => (float[1,1,4,4] y, float[1,1,8,8] z) {
  y = GridSample(x, grid)
  z = Upsample<mode = "nearest">(x, s)
  s = Constant<value = float[4] {1.0, 1.0, 2.0, 2.0}>()
})"));
  auto o = of_rule(fs, "op_not_in_opset");
  ASSERT_EQ(o.size(), 2u) << dump(fs);
  EXPECT_NE(o[0].message.find("introduced in opset 16"), std::string::npos) << o[0].message;
  // No conversion can add an op the model's opset lacks: the fix is declaring the opset its form
  // needs, in words (lint_fix_test.cpp tests the fixes themselves).
  EXPECT_NE(o[0].message.find("set its ai.onnx version in opset_import to 16"), std::string::npos)
      << o[0].message;
  EXPECT_EQ(o[0].message.find('`'), std::string::npos) << o[0].message;
  EXPECT_EQ(o[1].op_type, "Upsample");
  EXPECT_NE(o[1].message.find("removed in opset 10"), std::string::npos) << o[1].message;
}

TEST(Lint, DomainNotImported) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  y = Relu(x)
})");
  m.mutable_graph()->mutable_node(0)->set_domain("ai.onnx.ml");
  m.mutable_graph()->mutable_node(0)->set_op_type("Normalizer");
  auto o = of_rule(lint_proto(m), "op_not_in_opset");
  ASSERT_EQ(o.size(), 1u);
  EXPECT_NE(o[0].message.find("does not import"), std::string::npos) << o[0].message;
}

TEST(Lint, AttributesMissingUnknownAndWrongType) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,4,4] x, float[1,1,3,3] w, int64[2] i) => (float[1,1,2,2] y, float[2] c, float[4,4,1,1] t) {
  y = Conv<kernel = [3, 3]>(x, w)
  c = Cast<to = 1>(i)
  t = Transpose<perm = [3, 2, 1, 0]>(x)
})");
  auto* g = m.mutable_graph();
  g->mutable_node(1)->clear_attribute();  // Cast without its required 'to'
  auto* perm = g->mutable_node(2)->mutable_attribute(0);
  perm->clear_ints();
  perm->set_type(onnx::AttributeProto::FLOAT);
  perm->set_f(1.0f);
  auto fs = lint_proto(m);
  auto a = of_rule(fs, "attributes");
  ASSERT_EQ(a.size(), 3u) << dump(fs);
  EXPECT_NE(a[0].message.find("did you mean 'kernel_shape'?"), std::string::npos) << a[0].message;
  EXPECT_NE(a[1].message.find("required attribute 'to'"), std::string::npos) << a[1].message;
  EXPECT_NE(a[2].message.find("'perm' is of type float but"), std::string::npos) << a[2].message;
  EXPECT_NE(a[2].message.find("expects ints"), std::string::npos) << a[2].message;
}

TEST(Lint, ConvKernelShapeContradictingWeightAndOutputPaddingAtStride) {
  auto fs = lint_proto(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,8,8] x) => (float[1,2,6,6] y, float[1,1,16,16] z)
  <float[2,1,3,3] w = {0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0},
   float[1,1,2,2] tw = {0,0,0,0}> {
  y = Conv<kernel_shape = [5, 5]>(x, w)
  z = ConvTranspose<strides = [2, 2], output_padding = [2, 0]>(x, tw)
})"));
  auto c = of_rule(fs, "conv_attributes");
  ASSERT_EQ(c.size(), 2u) << dump(fs);
  EXPECT_EQ(c[0].severity, Severity::kError);
  EXPECT_EQ(c[0].node_index, 0);
  EXPECT_NE(c[0].message.find("kernel_shape [5, 5] contradicts weight 'w' of shape [2, 1, 3, 3]"),
            std::string::npos)
      << c[0].message;
  EXPECT_NE(c[0].message.find("fix kernel_shape or remove it"), std::string::npos);
  EXPECT_EQ(c[1].severity, Severity::kError);
  EXPECT_EQ(c[1].op_type, "ConvTranspose");
  EXPECT_NE(c[1].message.find("output_padding [2, 0] has 2 on spatial axis 0"), std::string::npos)
      << c[1].message;
  EXPECT_NE(c[1].message.find("stride (2)"), std::string::npos) << c[1].message;
}

TEST(Lint, ConvStridesZeroAndGoodConvsPass) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,8,8] x) => (float[1,2,6,6] y, float[1,1,17,17] z)
  <float[2,1,3,3] w = {0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0},
   float[1,1,2,2] tw = {0,0,0,0}> {
  y = Conv<kernel_shape = [3, 3]>(x, w)
  z = ConvTranspose<strides = [2, 2], output_padding = [1, 1]>(x, tw)
})");
  EXPECT_TRUE(of_rule(lint_proto(m), "conv_attributes").empty());
  m.mutable_graph()->mutable_node(0)->add_attribute()->CopyFrom(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,8,8] x, float[2,1,3,3] w) => (float[1,2,6,6] y) { y = Conv<strides = [1, 0]>(x, w) })")
                                                                    .graph()
                                                                    .node(0)
                                                                    .attribute(0));
  auto c = of_rule(lint_proto(m), "conv_attributes");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].message.find("strides [1, 0] has 0 on spatial axis 1"), std::string::npos)
      << c[0].message;
}

TEST(Lint, PoolWindowBelowOneNamesTheNode) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,8,8] x) => (float[1,1,4,4] y, float[1,1,4,4] z) {
  y = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(x)
  z = AveragePool<kernel_shape = [2, 2], strides = [2, 2]>(x)
})");
  EXPECT_TRUE(of_rule(lint_proto(m), "pool_attributes").empty());
  m.mutable_graph()->mutable_node(0)->mutable_attribute(1)->set_ints(1, 0);
  m.mutable_graph()->mutable_node(1)->mutable_attribute(0)->set_ints(0, -1);
  auto fs = lint_proto(m);
  auto p = of_rule(fs, "pool_attributes");
  ASSERT_EQ(p.size(), 2u) << dump(fs);
  EXPECT_EQ(p[0].op_type, "MaxPool");
  EXPECT_NE(p[0].message.find("strides [2, 0] has 0 on spatial axis 1"), std::string::npos)
      << p[0].message;
  EXPECT_EQ(p[1].op_type, "AveragePool");
  EXPECT_NE(p[1].message.find("kernel_shape [-1, 2] has -1"), std::string::npos) << p[1].message;
}

// Attribute values no backend can use (issue 17 item 13: `run` exited 1 with two failed rows):
// each is an error naming the attribute, and `run` refuses the model with exit status 2.
TEST(Lint, AttributeValuesNoRunCanUseAreErrors) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,2,2] x) => (float[1,4,2,2] a, float[1,4,2,2] b, float[1,4,2,2] c, float[1,1,4,4] d,
                         float[1,4,2,2] e) {
  a = Transpose<perm = [0, 1, 2, 3]>(x)
  b = Transpose<perm = [0, 1, 3, 2]>(x)
  c = Cast<to = 1>(x)
  d = DepthToSpace<blocksize = 2>(x)
  e = LRN<size = 3>(x)
})");
  EXPECT_TRUE(of_rule(lint_proto(m), "attribute_values").empty()) << dump(lint_proto(m));
  auto* g = m.mutable_graph();
  g->mutable_node(0)->mutable_attribute(0)->set_ints(1, 0);  // [0, 0, 2, 3]
  g->mutable_node(1)->mutable_attribute(0)->add_ints(4);     // 5 values for rank 4
  g->mutable_node(2)->mutable_attribute(0)->set_i(99);
  g->mutable_node(3)->mutable_attribute(0)->set_i(0);
  g->mutable_node(4)->mutable_attribute(0)->set_i(-3);
  auto fs = lint_proto(m);
  auto v = of_rule(fs, "attribute_values");
  ASSERT_EQ(v.size(), 5u) << dump(fs);
  EXPECT_NE(v[0].message.find("'perm' [0, 0, 2, 3] holds 0 twice"), std::string::npos)
      << v[0].message;
  EXPECT_NE(v[1].message.find("has 5 values but the input has rank 4"), std::string::npos)
      << v[1].message;
  EXPECT_NE(v[2].message.find("'to' 99 is not an ONNX data type"), std::string::npos)
      << v[2].message;
  EXPECT_NE(v[3].message.find("'blocksize' 0 must be 1 or more for DepthToSpace"),
            std::string::npos)
      << v[3].message;
  EXPECT_NE(v[4].message.find("'size' -3 must be 1 or more for LRN"), std::string::npos)
      << v[4].message;
}

TEST(Lint, AxisOutOfRangeIsAnErrorNotACrash) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x, float[3] s) => (float[2,3] y, float[2,3] z, float[6] f) {
  y = LayerNormalization<axis = 1>(x, s)
  z = Softmax<axis = -3>(x)
  f = Flatten<axis = 2>(x)
})");
  m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_i(int64_t{1} << 31);
  auto fs = lint_proto(m);
  auto a = of_rule(fs, "axis_range");
  ASSERT_EQ(a.size(), 2u) << dump(fs);  // Flatten's axis may equal the rank
  EXPECT_EQ(a[0].op_type, "LayerNormalization");
  EXPECT_NE(a[0].message.find("axis 2147483648 is out of range for any tensor"), std::string::npos)
      << a[0].message;
  EXPECT_EQ(a[1].op_type, "Softmax");
  EXPECT_NE(a[1].message.find("axis -3 is out of range for input 'x' of rank 2"), std::string::npos)
      << a[1].message;
  EXPECT_NE(a[1].message.find("[-2, 1]"), std::string::npos) << a[1].message;
}

TEST(Lint, ScanWithoutBodyIsAFindingNotACrash) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y) {
  y = Relu(x)
})");
  auto* n = m.mutable_graph()->mutable_node(0);
  n->set_op_type("Scan");  // an op type changed without its graph attribute
  auto* a = n->add_attribute();
  a->set_name("num_scan_inputs");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  auto fs = lint_proto(m);
  auto a_fs = of_rule(fs, "attributes");
  ASSERT_EQ(a_fs.size(), 1u) << dump(fs);
  EXPECT_NE(a_fs[0].message.find("required attribute 'body'"), std::string::npos);
}

TEST(Lint, NegativeInitializerDimsNameTheReader) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) <float[2] b = {1.0, 2.0}> {
  y = Add(x, b)
})");
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, -2);
  auto fs = lint_proto(m);
  auto d = of_rule(fs, "negative_dims");
  ASSERT_EQ(d.size(), 1u) << dump(fs);
  EXPECT_EQ(d[0].severity, Severity::kError);
  EXPECT_EQ(d[0].op_type, "Add");
  EXPECT_NE(d[0].message.find("initializer 'b' has dims [-2]"), std::string::npos) << d[0].message;
}

TEST(Lint, StoredTensorsThatDoNotFillTheirDims) {
  // An initializer whose raw_data is shorter than its dims (libonnx 1.12's shape inference read
  // past it) and a Constant whose typed field holds too few values: errors naming the reader.
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4] x) => (float[4] y) <float[4] b = {1.0, 2.0, 3.0, 4.0}> {
  c = Constant <value = float[3] {1.0, 2.0, 3.0}> ()
  s = Add(x, b)
  y = Mul(s, s)
})");
  auto* b = m.mutable_graph()->mutable_initializer(0);
  b->clear_float_data();
  b->set_raw_data(std::string(8, '\0'));  // 2 floats for dims [4]
  m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t()->set_dims(0, 5);
  auto fs = lint_proto(m);
  auto d = of_rule(fs, "tensor_data");
  ASSERT_EQ(d.size(), 2u) << dump(fs);
  for (const auto& f : d) EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(d[0].op_type, "Constant");
  EXPECT_NE(d[0].message.find("3 stored values where its dims need 5"), std::string::npos)
      << d[0].message;
  EXPECT_EQ(d[1].op_type, "Add");
  EXPECT_NE(d[1].message.find("initializer 'b' of dims [4] has raw_data of 8 bytes where its "
                              "dims need 16"),
            std::string::npos)
      << d[1].message;
  // A well-formed model has no such finding.
  EXPECT_TRUE(of_rule(lint_proto(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) <float[2] b = {1.0, 2.0}> {
  y = Add(x, b)
})")),
                      "tensor_data")
                  .empty());
}

TEST(Lint, UnnamedGraphInputsAndOutputsAreErrors) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  y = Relu(x)
})");
  m.mutable_graph()->mutable_input(0)->set_name("");
  m.mutable_graph()->mutable_output(0)->set_name("");
  m.mutable_graph()->mutable_node(0)->set_input(0, "");
  m.mutable_graph()->mutable_node(0)->set_output(0, "");
  auto fs = lint_proto(m);
  auto u = of_rule(fs, "unnamed_value");
  ASSERT_EQ(u.size(), 3u) << dump(fs);
  EXPECT_EQ(u[0].severity, Severity::kError);
  EXPECT_NE(u[0].message.find("graph input #0 has an empty name"), std::string::npos);
  EXPECT_NE(u[1].message.find("graph output #0 has an empty name"), std::string::npos);
  // Relu's one input is required: an empty name there is an error too.
  EXPECT_EQ(u[2].message,
            "input 0 ('X') is required but its name is empty, so nothing feeds it; give it the "
            "name of the value it should read.");
}

// Issue 39: an output name emptied together with its reader's input: the reader's required input
// is an error naming the likely producer; an omitted optional input is not.
TEST(Lint, AnEmptyRequiredInputIsAnErrorAndAnOmittedOptionalOneIsNot) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y, float[2] z) {
  r = Relu(x)
  y = Neg(r)
  z = Clip(x, , )
})");
  m.mutable_graph()->mutable_node(0)->set_output(0, "");
  m.mutable_graph()->mutable_node(1)->set_input(0, "");
  auto fs = lint_proto(m);
  auto u = of_rule(fs, "unnamed_value");
  ASSERT_EQ(u.size(), 1u) << dump(fs);
  EXPECT_EQ(u[0].severity, Severity::kError);
  EXPECT_EQ(u[0].node_index, 1);
  EXPECT_EQ(u[0].message,
            "input 0 ('X') is required but its name is empty, so nothing feeds it; node #0 Relu "
            "has an output with an empty name too: name that output and read it here.");
}

// Issue 39: calls between local functions. A call to a function of a local domain that does not
// exist, a function calling itself, and two calling each other are errors; a function calling
// another one, and a custom-domain op of a domain without local functions, are not.
TEST(Lint, UndefinedAndRecursiveFunctionCallsAreErrors) {
  auto undefined = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float[2] x) => (float[2] y) {
  y = local.twice(x)
}
<domain: "local", opset_import: ["" : 13, "local" : 1]>
twice (a) => (b) {
  b = local.thrice(a)
})");
  auto u = of_rule(lint_proto(undefined), "function_calls");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].severity, Severity::kError);
  EXPECT_EQ(u[0].message,
            "function 'twice' (domain 'local') calls 'thrice' of domain 'local', which is not a "
            "function of this model (its functions there: 'twice'); define it or call one of "
            "those.");

  auto self = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float[2] x) => (float[2] y) {
  y = local.f(x)
}
<domain: "local", opset_import: ["" : 13, "local" : 1]>
f (a) => (b) {
  b = local.f(a)
})");
  u = of_rule(lint_proto(self), "function_calls");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_NE(u[0].message.find("function 'f' (domain 'local') calls itself; a function's body "
                              "cannot call it again"),
            std::string::npos)
      << u[0].message;

  auto mutual = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float[2] x) => (float[2] y) {
  y = local.h(x)
}
<domain: "local", opset_import: ["" : 13, "local" : 1]>
f (a) => (b) {
  b = local.g(a)
}
<domain: "local", opset_import: ["" : 13, "local" : 1]>
g (a) => (b) {
  r = Relu(a)
  b = local.f(r)
}
<domain: "local", opset_import: ["" : 13, "local" : 1]>
h (a) => (b) {
  b = local.f(a)
})");
  u = of_rule(lint_proto(mutual), "function_calls");
  ASSERT_EQ(u.size(), 1u) << dump(lint_proto(mutual));
  EXPECT_NE(u[0].message.find("function 'f' (domain 'local') calls itself through 'g' -> 'f'"),
            std::string::npos)
      << u[0].message;

  auto fine = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1, "com.example" : 1]>
g (float[2] x) => (float[2] y) {
  t = local.f(x)
  y = com.example.Custom(t)
}
<domain: "local", opset_import: ["" : 13, "local" : 1]>
f (a) => (b) {
  b = local.g(a)
}
<domain: "local", opset_import: ["" : 13]>
g (a) => (b) {
  b = Relu(a)
})");
  EXPECT_TRUE(of_rule(lint_proto(fine), "function_calls").empty());
}

// Issue 39: a sparse initializer with an index outside its dims is an error (it cannot be made
// dense); indices out of ascending order are a warning; a well-formed one has no finding.
TEST(Lint, SparseInitializerIndicesAreChecked) {
  auto with_sparse = [](std::vector<int64_t> indices, std::vector<int64_t> index_dims) {
    auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y) {
  y = Add(x, b)
})");
    auto* s = m.mutable_graph()->add_sparse_initializer();
    s->add_dims(2);
    s->add_dims(3);
    auto* v = s->mutable_values();
    v->set_name("b");
    v->set_data_type(onnx::TensorProto::FLOAT);
    v->add_dims(2);
    v->add_float_data(1);
    v->add_float_data(2);
    auto* i = s->mutable_indices();
    i->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : index_dims) i->add_dims(d);
    for (int64_t k : indices) i->add_int64_data(k);
    return of_rule(lint_proto(m), "sparse_initializer");
  };
  EXPECT_TRUE(with_sparse({1, 5}, {2}).empty());
  EXPECT_TRUE(with_sparse({0, 1, 1, 2}, {2, 2}).empty());
  auto linear = with_sparse({1, 6}, {2});
  ASSERT_EQ(linear.size(), 1u);
  EXPECT_EQ(linear[0].severity, Severity::kError);
  EXPECT_EQ(linear[0].message,
            "sparse initializer 'b' of dims [2, 3] has index 6 (value 1) outside its 6 elements; "
            "re-export the model or fix the tensor.");
  auto coords = with_sparse({0, 1, 2, 0}, {2, 2});
  ASSERT_EQ(coords.size(), 1u);
  EXPECT_NE(coords[0].message.find("index 2 on axis 0 (value 1) outside dims [2, 3]"),
            std::string::npos)
      << coords[0].message;
  auto shape = with_sparse({0, 1, 2}, {3});
  ASSERT_EQ(shape.size(), 1u);
  EXPECT_NE(shape[0].message.find("indices of dims [3] (they must be int64 of dims [2] or [2, 2])"),
            std::string::npos)
      << shape[0].message;
  auto unordered = with_sparse({5, 1}, {2});
  ASSERT_EQ(unordered.size(), 1u);
  EXPECT_EQ(unordered[0].severity, Severity::kWarning);
}

TEST(Lint, FunctionCallingAnOpThatExistsNowhere) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (float[2] x) => (float[2] y) {
  y = local.twice(x)
}
<domain: "local", opset_import: ["" : 13]>
twice (a) => (b) {
  b = Relux(a)
})");
  auto fs = lint_proto(m);
  auto u = of_rule(fs, "unknown_op");
  ASSERT_EQ(u.size(), 1u) << dump(fs);
  EXPECT_EQ(u[0].severity, Severity::kError);
  EXPECT_NE(u[0].message.find("function 'twice' (domain 'local') calls 'Relux'"), std::string::npos)
      << u[0].message;
  EXPECT_NE(u[0].message.find("did you mean 'Relu'?"), std::string::npos) << u[0].message;
}

TEST(Lint, ValueInfoMismatch) {
  auto fs = lint_proto(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y) <float[3,2] t> {
  t = Relu(x)
  y = Neg(t)
})"));
  auto v = of_rule(fs, "value_info_mismatch");
  ASSERT_EQ(v.size(), 1u) << dump(fs);
  EXPECT_EQ(v[0].node_index, 0);
  EXPECT_NE(v[0].message.find("tensor(float)[3,2]"), std::string::npos) << v[0].message;
  EXPECT_NE(v[0].message.find("tensor(float)[2,3]"), std::string::npos) << v[0].message;
  // Graph outputs too.
  fs = lint_proto(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (int64[2,3] y) {
  y = Relu(x)
})"));
  v = of_rule(fs, "value_info_mismatch");
  ASSERT_EQ(v.size(), 1u) << dump(fs);
  EXPECT_NE(v[0].message.find("element type"), std::string::npos) << v[0].message;
}

TEST(Lint, NewerThanKnownIsWarningsNotErrors) {
  auto m = parse_text_model(kClean);
  m.set_ir_version(99);
  m.mutable_opset_import(0)->set_version(99);
  auto fs = lint_proto(m);
  EXPECT_EQ(errors(fs), 0) << dump(fs);
  auto v = of_rule(fs, "version");
  ASSERT_EQ(v.size(), 2u) << dump(fs);
  EXPECT_EQ(v[0].severity, Severity::kWarning);
  // An op this ONNX cannot know is a warning, not an unknown_op error.
  m.mutable_graph()->mutable_node(1)->set_op_type("FutureOp");
  fs = lint_proto(m);
  EXPECT_EQ(errors(fs), 0) << dump(fs);
  EXPECT_EQ(of_rule(fs, "unknown_op").size(), 1u) << dump(fs);
}

TEST(Lint, NodeNamesEmptyCountedOnceDuplicatesWarned) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  a = Relu(x)
  b = Neg(a)
  c = Abs(b)
  y = Identity(c)
})");
  m.mutable_graph()->mutable_node(0)->set_name("same");
  m.mutable_graph()->mutable_node(1)->set_name("same");
  auto fs = of_rule(lint_proto(m), "node_names");
  ASSERT_EQ(fs.size(), 2u) << dump(fs);
  EXPECT_EQ(fs[0].severity, Severity::kInfo);
  EXPECT_NE(fs[0].message.find("2 of 4 nodes have no name"), std::string::npos) << fs[0].message;
  EXPECT_EQ(fs[1].severity, Severity::kWarning);
  EXPECT_EQ(fs[1].node_index, 1);
}

TEST(Lint, SubgraphsSeeOuterScopeAndReportTheirPath) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] x) => (float[2] y) {
  y = If(c) <then_branch = t () => (float[2] o) { o = Relu(x) },
             else_branch = e () => (float[2] o2) { o2 = Neg(xx) }>
})");
  m.mutable_graph()->mutable_node(0)->set_name("If_3");
  auto fs = lint_proto(m);
  auto u = of_rule(fs, "undefined_input");
  ASSERT_EQ(u.size(), 1u) << dump(fs);  // 'x' from the outer scope is fine; 'xx' is not
  EXPECT_EQ(u[0].graph, "main/If_3:else_branch");
  EXPECT_NE(u[0].message.find("did you mean 'x'?"), std::string::npos) << u[0].message;
}

TEST(Lint, SubgraphReadingAValueProducedLaterIsOutOfOrder) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] x) => (float[2] y) {
  y = If(c) <then_branch = t () => (float[2] o) { o = Relu(late) },
             else_branch = e () => (float[2] o2) { o2 = Neg(x) }>
  late = Abs(x)
})");
  auto fs = lint_proto(m);
  auto u = of_rule(fs, "use_before_definition");
  ASSERT_EQ(u.size(), 1u) << dump(fs);
  EXPECT_EQ(u[0].graph, "main");
  EXPECT_EQ(u[0].op_type, "If");
  EXPECT_NE(u[0].message.find("its subgraph reads 'late'"), std::string::npos) << u[0].message;
  EXPECT_TRUE(of_rule(fs, "undefined_input").empty()) << dump(fs);
}

TEST(Lint, AllProblemsInOnePassSortedByGraphThenNode) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y, float[2] gone) {
  b = Neg(missing)
  y = Relux(b)
})");
  auto fs = lint_proto(m);
  EXPECT_FALSE(of_rule(fs, "onnx_checker").empty()) << dump(fs);
  EXPECT_FALSE(of_rule(fs, "undefined_input").empty()) << dump(fs);
  EXPECT_FALSE(of_rule(fs, "missing_graph_output").empty()) << dump(fs);
  EXPECT_FALSE(of_rule(fs, "unknown_op").empty()) << dump(fs);
  EXPECT_FALSE(of_rule(fs, "unused_input").empty()) << dump(fs);
  for (size_t k = 1; k < fs.size(); ++k)
    if (fs[k].graph == fs[k - 1].graph) {
      EXPECT_LE(fs[k - 1].node_index, fs[k].node_index) << dump(fs);
    }
}

TEST(Lint, DisabledRulesDoNotRun) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  y = Neg(missing)
})");
  LintOptions opt;
  opt.disabled_rules = {"undefined_input", "onnx_checker", "shape_inference"};
  auto fs = lint_proto(m, opt);
  EXPECT_TRUE(of_rule(fs, "undefined_input").empty()) << dump(fs);
}

TEST(LintReport, JsonAndSummary) {
  std::vector<Finding> fs = {{"undefined_input", Severity::kError, "n", 2, "Add", "main", "bad."},
                             {"dead_node", Severity::kInfo, "", 3, "Neg", "main", "dead."},
                             {"unused_input", Severity::kWarning, "", -1, "", "main", "unused."}};
  EXPECT_EQ(report::lint_summary(fs, "m.onnx"), "1 error, 1 warning, 1 info in m.onnx");
  auto j = report::lint_report_json(fs, "m.onnx");
  EXPECT_EQ(j["counts"]["error"], 1);
  EXPECT_EQ(j["findings"][0]["node_index"], 2);
  EXPECT_EQ(j["findings"][0]["severity"], "error");
  std::ostringstream os;
  report::print_lint_report(fs, "m.onnx", os, false);
  EXPECT_NE(os.str().find("#2 Add 'n'"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("1 error, 1 warning, 1 info in m.onnx"), std::string::npos);
}

}  // namespace
}  // namespace onnxdbg::lint
