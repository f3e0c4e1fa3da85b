// Tests of the public API (include/onnxdbg/) as a front-end calls it: options in, results out,
// errors as Status, cancellation, a caller's oracle for reduce, and results rendered to JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>

#include "core/onnx.h"
#include "core/temp_dir.h"
#include "core/transpose.h"
#include "onnxdbg/onnxdbg.h"
#include "reduce/candidate.h"
#include "test_util.h"

namespace onnxdbg::api {
namespace {

namespace fs = std::filesystem;
using onnxdbg::testing::parse_text_model;

/// y = Relu(x), x float[2,3].
constexpr const char* kRelu = R"(
<ir_version: 8, opset_import: ["" : 13]>
relu_graph (float[2,3] x) => (float[2,3] y) {
  y = Relu(x)
}
)";

/// A chain of four nodes; the tests' oracle says a candidate fails while it holds the Neg.
constexpr const char* kChain = R"(
<ir_version: 8, opset_import: ["" : 13]>
chain (float[2,3] x) => (float[2,3] y) {
  a = Relu(x)
  b = Neg(a)
  c = Sigmoid(b)
  y = Abs(c)
}
)";

/// y = x run through a Loop of `trips` iterations whose body computes v_out = Neg(Add(v, x)).
std::string loop_model(int64_t trips) {
  return R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y)
<int64 m = {)" +
         std::to_string(trips) +
         R"(}>
{
  cond = Constant<value = bool {1}>()
  y = Loop(m, cond, x) <
    body = body_g (int64 i, bool c_in, float[2] v) => (bool c_out, float[2] v_out) {
      c_out = Identity(c_in)
      a = Add(v, x)
      v_out = Neg(a)
    }
  >
})";
}

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = TempDir::create("onnxdbg-api-test-");
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    dir_ = std::move(*t);
  }
  /// Relu's run on the reference with one given sample and its golden output; the model is the
  /// caller's to set.
  static RunOptions relu_on_given_values() {
    RunOptions o;
    o.backends = {{"reference", {}}};
    o.inputs.samples = {{{"x", values({-1, 2, -3, 4, -5, 6})}}};
    o.comparison.golden = {{{"y", values({0, 2, 0, 4, 0, 6})}}};
    return o;
  }
  fs::path write(const std::string& name, const char* text) {
    const fs::path p = dir_.path() / name;
    EXPECT_TRUE(save_model(parse_text_model(text), p));
    return p;
  }
  static Tensor values(const std::vector<float>& v) {
    return Tensor::from_vector<float>({2, 3}, v);
  }
  TempDir dir_;
};

TEST_F(ApiTest, RunComparesGivenSamplesWithGivenGoldenOutputs) {
  RunOptions o = relu_on_given_values();
  o.model = write("relu.onnx", kRelu);
  auto r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->verdict(), Verdict::kAgree) << r->report.verdict_line;
  EXPECT_EQ(r->inputs_source, "<given>");

  // One golden element off by 0.5: the same call now disagrees, and the JSON says so.
  o.comparison.golden = {{{"y", values({0, 2, 0, 4, 0.5f, 6})}}};
  r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->verdict(), Verdict::kDisagree);
  const nlohmann::json j = to_json(*r);
  EXPECT_EQ(j["verdict"], "disagree");
  std::ostringstream text;
  print_text(*r, text, false);
  EXPECT_NE(text.str().find("DISAGREE"), std::string::npos) << text.str();
}

// With the layerwise pass on one sample, the output comparison's reference run is the pass's
// golden run (the reference runs once for both), and gives a plain run's outputs bit for bit;
// with two samples each pass makes its own run, as before.
TEST_F(ApiTest, LayerwiseSharesTheReferenceRunWithTheOutputComparison) {
  RunOptions o;
  o.model = write("chain.onnx", kChain);
  o.backends = {{"reference", {}}, {"onnxruntime", {}}};
  o.inputs.samples = {{{"x", values({-1, 2, -3, 4, -5, 6})}}};
  o.layerwise.enabled = true;
  o.layerwise.save_repro = "-";
  auto r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->verdict(), Verdict::kAgree) << r->report.verdict_line;
  ASSERT_EQ(r->layers.size(), 1u);
  ASSERT_TRUE(r->layers[0].report.has_value()) << r->layers[0].error;
  EXPECT_TRUE(r->layers[0].report->golden_run_shared);
  EXPECT_EQ(r->layers[0].report->reference_runs, 1);
  EXPECT_EQ(r->layers[0].report->tensors.size(), 4u);
  EXPECT_EQ(to_json(*r)["layerwise_summary"]["golden_run_shared"], true);
  std::ostringstream text;
  print_text(*r, text, false);
  EXPECT_NE(text.str().find("1 reference run (the output comparison's too)"), std::string::npos)
      << text.str();

  RunOptions plain = o;
  plain.layerwise.enabled = false;
  auto p = run(plain);
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  const BackendRun& shared = r->report.samples.at(0).backends.at(0);
  const BackendRun& alone = p->report.samples.at(0).backends.at(0);
  ASSERT_EQ(shared.spec.name, "reference");
  ASSERT_TRUE(shared.ok) << shared.error;
  ASSERT_EQ(shared.outputs.size(), 1u);
  const Tensor& y = shared.outputs.at("y");
  ASSERT_EQ(y.shape(), alone.outputs.at("y").shape());
  EXPECT_EQ(std::memcmp(y.raw(), alone.outputs.at("y").raw(), static_cast<size_t>(y.numel()) * 4),
            0);

  o.inputs.samples.push_back({{"x", values({3, -2, 1, 0, 5, -6})}});
  r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_EQ(r->layers.size(), 2u);
  for (const auto& l : r->layers) {
    ASSERT_TRUE(l.report.has_value()) << l.error;
    EXPECT_FALSE(l.report->golden_run_shared);
    EXPECT_EQ(l.report->reference_runs, 1);
  }
}

// The reference's own failure in the shared run (here the --max-iterations bound in a Loop) is
// the comparison's reference row and the layerwise pass's error on the sample; the call still
// returns the report, the other backend's row included, and the reference does not run again.
TEST_F(ApiTest, LayerwiseReportsTheSharedReferenceRunsFailureOnce) {
  RunOptions o;
  o.model = write("loop.onnx", loop_model(20000).c_str());
  o.backends = {{"reference", {}}, {"onnxruntime", {}}};
  o.inputs.samples = {{{"x", Tensor::from_vector<float>({2}, {1, -2})}}};
  o.max_iterations = 10;
  o.layerwise.enabled = true;
  o.layerwise.save_repro = "-";
  auto r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->verdict(), Verdict::kError);
  const auto& rows = r->report.samples.at(0).backends;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].ok);
  EXPECT_NE(rows[0].error.find("reached 10 iterations"), std::string::npos) << rows[0].error;
  EXPECT_TRUE(rows[1].ok) << rows[1].error;
  ASSERT_EQ(r->layers.size(), 1u);
  EXPECT_FALSE(r->layers[0].report.has_value());
  EXPECT_NE(r->layers[0].error.find("reached 10 iterations"), std::string::npos)
      << r->layers[0].error;
}

// Golden values given directly with intermediate tensors (as the Python package passes a
// PyTorch dump): compared layerwise on every backend, the reference too; without the layerwise
// pass only the graph output is.
TEST_F(ApiTest, RunRunsALoadedModelWithoutReadingItsFileAgain) {
  const std::filesystem::path path = write("relu.onnx", kRelu);
  auto model = Model::load(path);
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  EXPECT_EQ(model->path(), path);
  const ModelInfo info = model->info();
  ASSERT_EQ(info.inputs.size(), 1u);
  EXPECT_EQ(info.inputs[0].name, "x");
  ASSERT_EQ(info.nodes.size(), 1u);
  EXPECT_EQ(info.nodes[0].op_type, "Relu");
  std::filesystem::remove(path);  // only the loaded model is left: run must not read the file

  RunOptions o = relu_on_given_values();
  o.loaded_model = *model;
  auto r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->verdict(), Verdict::kAgree) << r->report.verdict_line;
  EXPECT_EQ(r->source, path);
  EXPECT_EQ(r->model.path(), path);

  // Naming another file beside it is a contradiction, refused in one sentence.
  o.model = dir_.path() / "other.onnx";
  r = run(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("other.onnx"), std::string::npos) << r.status().message();
}

TEST_F(ApiTest, RunLayerwiseComparesGivenIntermediateGoldenValues) {
  RunOptions o;
  o.model = write("chain.onnx", kChain);
  o.backends = {{"reference", {}}};
  o.inputs.samples = {{{"x", values({-1, 2, -3, 4, -5, 6})}}};
  std::vector<float> y;
  for (float a : {0.f, 2.f, 0.f, 4.f, 0.f, 6.f}) y.push_back(1 / (1 + std::exp(a)));
  // Neg's output off by 0.5 in one element; no values for 'a' and 'c'.
  o.comparison.golden = {{{"b", values({0, -2, 0, -4, 0.5f, -6})}, {"y", values(y)}}};
  o.layerwise.save_repro = "-";
  auto r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->verdict(), Verdict::kAgree) << r->report.verdict_line;
  EXPECT_TRUE(r->layers.empty());
  ASSERT_FALSE(r->messages.empty());
  EXPECT_NE(r->messages.back().text.find("1 tensor(s) that are not graph outputs; they are not "
                                         "compared"),
            std::string::npos)
      << r->messages.back().text;

  o.layerwise.enabled = true;
  r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->verdict(), Verdict::kDisagree);
  ASSERT_EQ(r->layers.size(), 1u);
  ASSERT_TRUE(r->layers[0].report.has_value()) << r->layers[0].error;
  const LayerwiseReport& lr = *r->layers[0].report;
  ASSERT_TRUE(lr.first.has_value());
  EXPECT_EQ(lr.tensors[lr.first->tensor].name, "b");
  EXPECT_EQ(lr.first->backend, "reference");
  EXPECT_EQ(lr.no_golden, (std::vector<std::string>{"a", "c"}));
  const nlohmann::json j = to_json(*r);
  EXPECT_EQ(j["layerwise_summary"]["golden_source"], "given");
  EXPECT_EQ(j["layerwise_summary"]["no_golden"], nlohmann::json({"a", "c"}));
  EXPECT_EQ(j["first_divergent_node"]["tensor"], "b");
  std::ostringstream text;
  print_text(*r, text, false);
  EXPECT_NE(text.str().find("layerwise against the given golden values: 2 intermediate tensors"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("no golden value: 2 tensors not compared ('a', 'c'"), std::string::npos)
      << text.str();
  // The overlay of the HTML page carries the same layerwise keys.
  EXPECT_EQ((*run_overlays(*r).run_report)["layerwise_summary"]["golden_source"], "given");
}

// A TensorFlow dump as golden values (issue 33): keys are TensorFlow's names without the
// converter's scope numbers, tensors are NHWC; --golden-names suffix and --golden-layout auto fit
// them to the NCHW model, and the layerwise pass names the node whose golden value is off.
TEST_F(ApiTest, RunLayerwiseFitsATensorFlowDumpByNameAndLayout) {
  onnx::ModelProto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,2,3] x) => (float[1,2,2,3] y)
{
  a = Relu(x)
  b = Neg(a)
  y = Abs(b)
}
)");
  const std::map<std::string, std::string> names = {
      {"a", "model_1/act_1/Relu:0"}, {"b", "model_1/neg_1/Neg:0"}, {"y", "Identity:0"}};
  for (auto& n : *model.mutable_graph()->mutable_node()) {
    for (auto& i : *n.mutable_input())
      if (names.count(i)) i = names.at(i);
    for (auto& out : *n.mutable_output()) out = names.at(out);
  }
  model.mutable_graph()->mutable_output(0)->set_name("Identity:0");
  RunOptions o;
  o.model = dir_.path() / "tf.onnx";
  ASSERT_TRUE(save_model(model, o.model));
  o.backends = {{"reference", {}}};
  // x in TensorFlow's layout (NHWC 1x2x3x2), and the model's (NCHW 1x2x2x3).
  std::vector<float> v = {-1, 2, -3, 4, -5, 6, 7, -8, 9, -10, 11, -12};
  const Tensor x_nhwc = Tensor::from_vector<float>({1, 2, 3, 2}, v);
  auto x = transpose_axes(x_nhwc, {0, 3, 1, 2});
  ASSERT_TRUE(x.has_value());
  o.inputs.samples = {{{"x", *x}}};
  std::vector<float> relu, neg, abs;
  for (float f : v) {
    relu.push_back(std::max(f, 0.f));
    neg.push_back(-std::max(f, 0.f));
    abs.push_back(std::max(f, 0.f));
  }
  neg[4] += 0.5f;  // Neg's golden value off in one element
  auto nhwc = [](const std::vector<float>& d) {
    return Tensor::from_vector<float>({1, 2, 3, 2}, d);
  };
  o.comparison.golden = {
      {{"act/Relu:0", nhwc(relu)}, {"neg/Neg:0", nhwc(neg)}, {"Identity", nhwc(abs)}}};
  o.comparison.golden_names = GoldenNames::kSuffix;
  o.comparison.golden_layout = GoldenLayout::kAuto;
  o.layerwise.enabled = true;
  o.layerwise.save_repro = "-";
  auto r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->verdict(), Verdict::kDisagree);
  ASSERT_TRUE(r->layers.at(0).report.has_value()) << r->layers[0].error;
  const LayerwiseReport& lr = *r->layers[0].report;
  ASSERT_TRUE(lr.first.has_value());
  EXPECT_EQ(lr.tensors[lr.first->tensor].name, "model_1/neg_1/Neg:0");
  ASSERT_TRUE(r->golden_match.has_value());
  EXPECT_EQ(r->golden_match->renamed.size(), 3u);
  const nlohmann::json j = to_json(*r);
  const nlohmann::json& m = j["golden_mapping"];
  EXPECT_EQ(m["names"], "suffix");
  EXPECT_EQ(m["layout"], "auto");
  EXPECT_EQ(m["renamed"][1],
            nlohmann::json({{"key", "act/Relu:0"}, {"tensor", "model_1/act_1/Relu:0"}}));
  EXPECT_EQ(m["transposed"][0]["perm"], nlohmann::json({0, 3, 1, 2}));
  EXPECT_EQ(m["transposed"][0]["tensors"].size(), 3u);
  EXPECT_EQ(m["notes"].size(), 2u);
  EXPECT_EQ(j["first_divergent_node"]["tensor"], "model_1/neg_1/Neg:0");
  size_t notes = 0;
  for (const auto& msg : r->messages)
    notes += msg.text.starts_with("renamed 3 golden keys of the given golden outputs") ||
             msg.text.starts_with("transposed 3 golden tensors of the given golden outputs");
  EXPECT_EQ(notes, 2u);
}

TEST_F(ApiTest, RunGeneratesSamplesAndKeepsThemApart) {
  RunOptions o;
  o.model = write("relu.onnx", kRelu);
  o.backends = {{"reference", {}}, {"reference", {{"accumulate", "double"}}}};
  o.inputs.iterations = 3;
  o.inputs.generate.seed = 7;
  auto r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_EQ(r->report.samples.size(), 3u);
  EXPECT_EQ(r->sample_ids, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(r->verdict(), Verdict::kAgree);
  // Sample i comes from seed 7 + i: the samples differ.
  const auto& in0 = r->report.samples[0].inputs.at("x");
  const auto& in1 = r->report.samples[1].inputs.at("x");
  EXPECT_NE(in0.data<float>()[0], in1.data<float>()[0]);
  EXPECT_EQ(to_json(*r)["sample_count"], 3);
}

TEST_F(ApiTest, RunRefusesContradictoryOptionsBeforeLoading) {
  RunOptions o;
  o.model = dir_.path() / "does-not-exist.onnx";
  o.inputs.iterations = 2;
  o.inputs.samples = {{{"x", values({1, 2, 3, 4, 5, 6})}}};
  auto r = run(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("--iterations"), std::string::npos) << r.status().message();

  o.inputs.iterations.reset();
  r = run(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().to_string().find("does-not-exist.onnx"), std::string::npos)
      << r.status().to_string();
}

// A malformed model is a model error before any backend runs (issue 17 item 13; was a
// "backend failed" row and exit status 1); a valid one that a backend refuses stays a row.
TEST_F(ApiTest, RunRefusesAMalformedModelBeforeAnyBackendAndNamesTheNode) {
  RunOptions o;
  o.model = write("undefined.onnx", R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y) {
  y = Relu(x1)
})");
  o.backends = {{"reference", {}}};
  auto r = run(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kModelError);
  EXPECT_NE(r.status().message().find("the model is malformed, so no backend ran it: node #0 Relu"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("'x1'"), std::string::npos) << r.status().message();

  auto m = parse_text_model(kRelu);
  auto* s = m.mutable_graph()->add_sparse_initializer();
  s->add_dims(1);
  s->mutable_values()->set_name("unused_sparse");
  s->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  s->mutable_values()->add_dims(0);
  s->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  s->mutable_indices()->add_dims(0);
  o.model = dir_.path() / "sparse.onnx";
  ASSERT_TRUE(save_model(m, o.model));
  r = run(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->verdict(), Verdict::kError);
  ASSERT_EQ(r->report.samples.at(0).backends.size(), 1u);
  EXPECT_NE(r->report.samples[0].backends[0].error.find(
                "sparse initializers are not supported by the reference interpreter"),
            std::string::npos)
      << r->report.samples[0].backends[0].error;
}

TEST_F(ApiTest, RunStopsWhenCancelled) {
  RunOptions o;
  o.model = write("relu.onnx", kRelu);
  o.backends = {{"reference", {}}};
  CallContext ctx;
  ctx.cancel.cancel();
  auto r = run(o, ctx);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kCancelled) << r.status().to_string();
}

TEST_F(ApiTest, RunStopsBetweenBackendsWhenCancelledMidway) {
  RunOptions o;
  o.model = write("relu.onnx", kRelu);
  o.backends = {{"reference", {}}, {"onnxruntime", {}}};
  o.layerwise.enabled = true;
  CallContext ctx;
  std::vector<std::string> seen;
  // Ctrl-C while the first backend loads: the second backend and the layerwise pass never start.
  ctx.progress = [&seen, token = ctx.cancel](const std::string& s) {
    seen.push_back(s);
    token.cancel();
  };
  auto r = run(o, ctx);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kCancelled) << r.status().to_string();
  for (const auto& s : seen) EXPECT_EQ(s.find("onnxruntime"), std::string::npos) << s;
  for (const auto& s : seen) EXPECT_EQ(s.find("layerwise"), std::string::npos) << s;
}

TEST_F(ApiTest, ReduceWithACallersOracleKeepsTheFailingNode) {
  ReduceOptions o;
  o.model = write("chain.onnx", kChain);
  o.output = dir_.path() / "reduced.onnx";
  int calls = 0;
  o.oracle = [&](const OracleCandidate& c) -> Expected<bool> {
    ++calls;
    onnx::ModelProto m;  // what a caller outside onnxdbg reads: the candidate's bytes
    if (!m.ParseFromArray(c.bytes.data(), static_cast<int>(c.bytes.size())))
      return invalid_argument("a candidate's bytes are no model");
    for (const auto& n : m.graph().node())
      if (n.op_type() == "Neg") return true;
    return false;
  };
  o.oracle_description = "holds a Neg";
  std::vector<std::string> progress;
  CallContext ctx;
  ctx.progress = [&](const std::string& s) { progress.push_back(s); };
  auto r = reduce(o, ctx);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_TRUE(r->stopped) << r->stopped.to_string();
  ASSERT_TRUE(r->report.has_value());
  EXPECT_TRUE(r->report->original_fails);
  EXPECT_EQ(r->report->kept_op_types, std::vector<std::string>{"Neg"});
  EXPECT_EQ(r->oracle, "holds a Neg");
  EXPECT_GT(calls, 1);
  EXPECT_FALSE(progress.empty());
  auto reduced = load_model(o.output);
  ASSERT_TRUE(reduced.has_value()) << reduced.status().to_string();
  EXPECT_EQ(reduced->proto.graph().node_size(), 1);
  EXPECT_EQ(to_json(*r)["nodes_after"], 1);
}

/// A Neg two If levels down: in the else branch of an If inside the then branch of another.
constexpr const char* kApiNestedIf = R"(
<ir_version: 8, opset_import: ["" : 13]>
nested (bool c, float[2,3] x) => (float[2,3] y) {
  a = Relu(x)
  y = If(c) <
    then_branch = t1 () => (float[2,3] p) {
      s = Sigmoid(a)
      p = If(c) <
        then_branch = t2 () => (float[2,3] q) { q = Abs(s) },
        else_branch = e2 () => (float[2,3] r) { n = Neg(s)  r = Tanh(n) }
      >
    },
    else_branch = e1 () => (float[2,3] u) { u = Exp(a) }
  >
}
)";

/// True when `g` or a body nested in it holds a node of `op`.
bool holds_op(const onnx::GraphProto& g, const std::string& op) {
  for (const auto& n : g.node()) {
    if (n.op_type() == op) return true;
    for (const auto& a : n.attribute())
      if (a.has_g() && holds_op(a.g(), op)) return true;
  }
  return false;
}

TEST_F(ApiTest, ReduceReachesAFailingNodeTwoIfLevelsDownAndRemovesTheIfs) {
  ReduceOptions o;
  o.model = write("nested.onnx", kApiNestedIf);
  o.output = dir_.path() / "reduced.onnx";
  o.oracle = [&](const OracleCandidate& c) -> Expected<bool> {
    return holds_op(c.built->model.graph(), "Neg");
  };
  o.oracle_description = "holds a Neg";
  auto r = reduce(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_TRUE(r->stopped) << r->stopped.to_string();
  ASSERT_TRUE(r->report.has_value());
  EXPECT_EQ(r->report->kept_op_types, std::vector<std::string>{"Neg"});
  EXPECT_EQ(r->report->nodes_before, 2);
  auto reduced = load_model(o.output);
  ASSERT_TRUE(reduced.has_value()) << reduced.status().to_string();
  EXPECT_EQ(reduced->proto.graph().node_size(), 1);
  EXPECT_FALSE(holds_op(reduced->proto.graph(), "If"));
  // Both replacements are noted: the outer If by its then branch, the inner one by its else
  // branch (its then branch, tried first, lost the Neg and cost a call).
  std::string notes;
  for (const auto& n : r->report->notes) notes += n + "\n";
  EXPECT_NE(notes.find("the then_branch of #"), std::string::npos) << notes;
  EXPECT_NE(notes.find("the else_branch of #"), std::string::npos) << notes;
  EXPECT_EQ(to_json(*r)["nodes_after"], 1);
}

// A failure inside a Loop body reduces past the Loop: the Loop is unrolled into the iterations it
// ran on the sample, and the strategies take the iterations apart down to one Neg.
TEST_F(ApiTest, ReduceUnrollsALoopAndKeepsOneIterationsFailingNode) {
  ReduceOptions o;
  o.model = write("loop.onnx", loop_model(3).c_str());
  o.output = dir_.path() / "reduced.onnx";
  o.oracle = [&](const OracleCandidate& c) -> Expected<bool> {
    return holds_op(c.built->model.graph(), "Neg");
  };
  o.oracle_description = "holds a Neg";
  auto r = reduce(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_TRUE(r->stopped) << r->stopped.to_string();
  auto reduced = load_model(o.output);
  ASSERT_TRUE(reduced.has_value()) << reduced.status().to_string();
  ASSERT_EQ(reduced->proto.graph().node_size(), 1);
  EXPECT_EQ(reduced->proto.graph().node(0).op_type(), "Neg");
  EXPECT_NE(reduced->proto.graph().node(0).name().find("/body/"), std::string::npos);
  std::string notes;
  for (const auto& n : r->report->notes) notes += n + "\n";
  EXPECT_NE(notes.find("the Loop was unrolled into its 3 iterations"), std::string::npos) << notes;
}

TEST_F(ApiTest, ReduceStopsBeforeTheNextOracleCallWhenCancelled) {
  ReduceOptions o;
  o.model = write("chain.onnx", kChain);
  o.output = dir_.path() / "reduced.onnx";
  CallContext ctx;
  int calls = 0;
  // The oracle cancels the call itself after its third verdict, as Ctrl-C would.
  o.oracle = [&](const OracleCandidate&) -> Expected<bool> {
    if (++calls == 3) ctx.cancel.cancel();
    return true;
  };
  auto r = reduce(o, ctx);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_FALSE(r->stopped);
  EXPECT_EQ(r->stopped.code(), ErrorCode::kCancelled) << r->stopped.to_string();
  EXPECT_EQ(calls, 3);
}

TEST_F(ApiTest, ReduceNeedsExactlyOneOracle) {
  ReduceOptions o;
  o.model = write("chain.onnx", kChain);
  o.output = dir_.path() / "reduced.onnx";
  auto r = reduce(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("say what failing means"), std::string::npos);
}

TEST_F(ApiTest, InspectLintAndDiffReturnTheirResults) {
  const fs::path chain = write("chain.onnx", kChain);
  auto s = inspect({chain, "layers"});
  ASSERT_TRUE(s.has_value()) << s.status().to_string();
  EXPECT_EQ(s->summary.node_count, 4);
  EXPECT_EQ(to_json(*s)["nodes"]["count"], 4);

  auto l = lint({chain, {}});
  ASSERT_TRUE(l.has_value()) << l.status().to_string();
  EXPECT_FALSE(l->has_errors());

  auto same = diff({chain, chain});
  ASSERT_TRUE(same.has_value()) << same.status().to_string();
  EXPECT_TRUE(same->diff.identical());
  EXPECT_EQ(to_json(*same)["identical"], true);
  auto other = diff({chain, write("relu.onnx", kRelu)});
  ASSERT_TRUE(other.has_value()) << other.status().to_string();
  EXPECT_FALSE(other->diff.identical());
}

TEST(ApiMessages, PrintsWarningsAlwaysAndNotesOnRequest) {
  Messages m;
  add_note(m, "a note");
  add_warning(m, "a warning");
  std::ostringstream all, warnings;
  print_messages(m, all, true);
  print_messages(m, warnings, false);
  EXPECT_EQ(all.str(), "onnxdbg: note: a note\nonnxdbg: warning: a warning\n");
  EXPECT_EQ(warnings.str(), "onnxdbg: warning: a warning\n");
}

}  // namespace
}  // namespace onnxdbg::api
