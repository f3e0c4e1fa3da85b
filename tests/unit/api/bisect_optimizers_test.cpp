// Tests of api::bisect_optimizers (issue 36) on real ONNX Runtime sessions, with models written
// here: a QDQ Conv with per-channel int8 weights, a decomposed LayerNorm + erf-GELU MLP and a
// float16 MatMul+Add chain, whose outputs change with ONNX Runtime's optimization level. Nothing
// is a guess about ORT: the culprits must be among the transformers ORT's own log named, and the
// test re-runs ORT itself to check that they are a 1-minimal set that restores agreement. Also
// the backend options behind it (onnxruntime:disable=, config.KEY=, list_transformers=on).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/temp_dir.h"
#include "model/graph.h"
#include "model/model.h"
#include "onnxdbg/onnxdbg.h"
#include "test_util.h"

namespace onnxdbg::api {
namespace {

namespace fs = std::filesystem;
using onnxdbg::testing::parse_text_model;

/// Moves the graph inputs named in `weights` into initializers with those values.
onnx::ModelProto with_weights(onnx::ModelProto m, const std::map<std::string, Tensor>& weights) {
  auto* g = m.mutable_graph();
  auto* inputs = g->mutable_input();
  inputs->erase(
      std::remove_if(inputs->begin(), inputs->end(),
                     [&](const onnx::ValueInfoProto& v) { return weights.count(v.name()) != 0; }),
      inputs->end());
  for (const auto& [name, t] : weights) *g->add_initializer() = tensor_to_proto(t, name);
  return m;
}

template <typename T>
Tensor random_tensor(const Shape& shape, std::mt19937& rng, double lo, double hi) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<T>(std::is_integral_v<T> ? std::round(u(rng)) : u(rng));
  return Tensor::from_vector<T>(shape, v);
}

/// x -> Q -> DQ -> Conv(DQ(int8 W, per-channel scales), DQ(int32 bias)) -> Relu -> Q -> DQ, as
/// a quantization tool writes it (opset 13), 1x16x32x32 outputs, then a second Q -> DQ of
/// another scale (two quantizers in a row, as in microsoft/onnxruntime#25259): ONNX Runtime's
/// QDQ transformers fold the pairs, which changes most outputs by a step of one scale or the
/// other, on any CPU.
onnx::ModelProto qdq_conv() {
  std::mt19937 rng(7);
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
qdq_conv (float[1,8,32,32] x, float xs, uint8 xz, int8[16,8,3,3] w, float[16] ws, int8[16] wz,
          int32[16] b, float[16] bs, int32[16] bz, float ys, uint8 yz, float y2s)
    => (float[1,16,32,32] y) {
  xq = QuantizeLinear(x, xs, xz)
  xd = DequantizeLinear(xq, xs, xz)
  wd = DequantizeLinear<axis = 0>(w, ws, wz)
  bd = DequantizeLinear<axis = 0>(b, bs, bz)
  c = Conv<pads = [1, 1, 1, 1]>(xd, wd, bd)
  r = Relu(c)
  yq = QuantizeLinear(r, ys, yz)
  yd = DequantizeLinear(yq, ys, yz)
  yq2 = QuantizeLinear(yd, y2s, yz)
  y = DequantizeLinear(yq2, y2s, yz)
})");
  Tensor ws = random_tensor<float>({16}, rng, 0.001, 0.011);
  std::vector<float> bs(16);
  for (size_t i = 0; i < 16; ++i) bs[i] = 0.02f * ws.data<float>()[i];
  return with_weights(m, {{"xs", Tensor::scalar<float>(0.02f)},
                          {"xz", Tensor::scalar<uint8_t>(128)},
                          {"w", random_tensor<int8_t>({16, 8, 3, 3}, rng, -127, 127)},
                          {"ws", ws},
                          {"wz", Tensor::from_vector<int8_t>({16}, std::vector<int8_t>(16, 0))},
                          {"b", random_tensor<int32_t>({16}, rng, -1000, 1000)},
                          {"bs", Tensor::from_vector<float>({16}, bs)},
                          {"bz", Tensor::from_vector<int32_t>({16}, std::vector<int32_t>(16, 0))},
                          {"ys", Tensor::scalar<float>(0.013f)},
                          {"y2s", Tensor::scalar<float>(0.03f)},
                          {"yz", Tensor::scalar<uint8_t>(0)}});
}

/// LayerNorm written out (ReduceMean, Sub, Pow, ..., Mul, Add), then MatMul+Add, erf-GELU
/// written out, MatMul+Add: the decomposed forms ORT's fusions look for.
onnx::ModelProto ln_gelu() {
  std::mt19937 rng(11);
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
ln_gelu (float[128,64] x, float[64] gamma, float[64] beta, float[64,256] w1, float[256] b1,
         float[256,64] w2, float[64] b2) => (float[128,64] y) {
  mean = ReduceMean<axes = [-1]>(x)
  xc = Sub(x, mean)
  two = Constant<value = float {2.0}>()
  sq = Pow(xc, two)
  var = ReduceMean<axes = [-1]>(sq)
  eps = Constant<value = float {0.00001}>()
  ve = Add(var, eps)
  sd = Sqrt(ve)
  xn = Div(xc, sd)
  xg = Mul(xn, gamma)
  ln = Add(xg, beta)
  m1 = MatMul(ln, w1)
  a1 = Add(m1, b1)
  sqrt2 = Constant<value = float {1.4142135}>()
  gd = Div(a1, sqrt2)
  ge = Erf(gd)
  one = Constant<value = float {1.0}>()
  ga = Add(ge, one)
  gm = Mul(a1, ga)
  half = Constant<value = float {0.5}>()
  g = Mul(gm, half)
  m2 = MatMul(g, w2)
  y = Add(m2, b2)
})");
  return with_weights(m, {{"gamma", random_tensor<float>({64}, rng, 0.5, 1.5)},
                          {"beta", random_tensor<float>({64}, rng, -0.5, 0.5)},
                          {"w1", random_tensor<float>({64, 256}, rng, -0.3, 0.3)},
                          {"b1", random_tensor<float>({256}, rng, -0.1, 0.1)},
                          {"w2", random_tensor<float>({256, 64}, rng, -0.2, 0.2)},
                          {"b2", random_tensor<float>({64}, rng, -0.1, 0.1)}});
}

/// Three float16 MatMul+Add layers.
onnx::ModelProto matmul_add_fp16() {
  std::mt19937 rng(13);
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
mm (float16[32,64] x, float16[64,64] w0, float16[64] b0, float16[64,64] w1, float16[64] b1,
    float16[64,64] w2, float16[64] b2) => (float16[32,64] y) {
  m0 = MatMul(x, w0)
  a0 = Add(m0, b0)
  m1 = MatMul(a0, w1)
  a1 = Add(m1, b1)
  m2 = MatMul(a1, w2)
  y = Add(m2, b2)
})");
  std::map<std::string, Tensor> w;
  for (int k = 0; k < 3; ++k) {
    auto wk = cast_tensor(random_tensor<float>({64, 64}, rng, -0.3, 0.3), DType::kFloat16);
    auto bk = cast_tensor(random_tensor<float>({64}, rng, -0.3, 0.3), DType::kFloat16);
    w.emplace("w" + std::to_string(k), std::move(*wk));
    w.emplace("b" + std::to_string(k), std::move(*bk));
  }
  return with_weights(m, w);
}

class BisectOptimizersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = TempDir::create("onnxdbg-bisect-test-");
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    dir_ = std::move(*t);
  }
  fs::path write(const std::string& name, const onnx::ModelProto& m) {
    const fs::path p = dir_.path() / name;
    EXPECT_TRUE(save_model(m, p));
    return p;
  }
  /// Options comparing opt=all with opt=disabled bit for bit (atol = rtol = 0), so that the
  /// difference does not hang on this CPU's rounding being near a tolerance.
  static BisectOptimizersOptions exact(const fs::path& model) {
    BisectOptimizersOptions o;
    o.model = model;
    o.comparison.tolerance.default_tol = {0, 0};
    return o;
  }
  /// Whether ORT with `disabled` names disabled agrees with opt=disabled on `o`'s inputs: ORT
  /// itself, apart from the bisection.
  static bool agrees_with(const BisectOptimizersOptions& o, const std::vector<std::string>& names) {
    RunOptions run;
    run.model = o.model;
    run.inputs = o.inputs;
    run.comparison = o.comparison;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : "+") + n;
    BackendSpec tested{"onnxruntime", {{"opt", "all"}}};
    if (!list.empty()) tested.options["disable"] = list;
    run.backends = {{"onnxruntime", {{"opt", "disabled"}}}, tested};
    auto r = api::run(run);
    EXPECT_TRUE(r.has_value()) << r.status().to_string();
    return r && r->verdict() == Verdict::kAgree;
  }
  /// The properties every bisection must have, checked against ORT: the culprits come from
  /// its log, disabling them restores agreement, and each one re-enabled breaks it again.
  static void expect_one_minimal(const BisectOptimizersOptions& o,
                                 const BisectOptimizersResult& r) {
    ASSERT_EQ(r.outcome, BisectOutcome::kFound) << r.verdict_line;
    ASSERT_FALSE(r.culprits.empty());
    for (const auto& c : r.culprits) {
      const bool from_log =
          std::find(r.candidates.begin(), r.candidates.end(), c) != r.candidates.end();
      // A culprit is a transformer the log named, or one rule of a rule set the log named.
      const bool rule =
          !from_log &&
          std::any_of(r.candidates.begin(), r.candidates.end(), [&](const std::string& t) {
            return t.find("_RuleBasedTransformer") != std::string::npos;
          });
      EXPECT_TRUE(from_log || rule) << c;
    }
    EXPECT_FALSE(agrees_with(o, {}));
    EXPECT_TRUE(agrees_with(o, r.culprits)) << r.verdict_line;
    for (const auto& c : r.culprits) {
      std::vector<std::string> rest;
      for (const auto& x : r.culprits)
        if (x != c) rest.push_back(x);
      EXPECT_FALSE(agrees_with(o, rest)) << c << " is not needed";
    }
  }
  TempDir dir_;
};

TEST_F(BisectOptimizersTest, AQdqConvNamesTheQdqTransformersAndTheirNodes) {
  const onnx::ModelProto model = qdq_conv();
  auto o = exact(write("qdq_conv.onnx", model));
  auto r = bisect_optimizers(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  expect_one_minimal(o, *r);
  // What the culprits did is said in the original model's nodes ("#8 QuantizeLinear"), or as a
  // node of ONNX Runtime's where no original node keeps its output names.
  ASSERT_FALSE(r->fused.empty() && r->removed.empty()) << api::json_text(to_json(*r));
  std::vector<std::string> labels = r->removed;
  for (const auto& f : r->fused) labels.insert(labels.end(), f.replaced.begin(), f.replaced.end());
  int originals = 0;
  for (const auto& l : labels) {
    bool original = false;
    for (int i = 0; i < model.graph().node_size(); ++i)
      original = original || l == node_label(model.graph().node(i), i);
    originals += original;
    EXPECT_TRUE(original || l.rfind("ONNX Runtime's #", 0) == 0) << l;
  }
  EXPECT_GT(originals, 0) << api::json_text(to_json(*r));
  EXPECT_FALSE(r->first_divergent_node.empty())
      << (r->messages.empty() ? "" : r->messages.back().text);
  // Within 2 k log2(N) + 2 sessions (no rule set was opened here).
  EXPECT_LE(r->search_sessions, r->session_bound) << api::json_text(to_json(*r));
  EXPECT_EQ(r->confirm_sessions, 2);
}

TEST_F(BisectOptimizersTest, ALayerNormGeluMlpNamesTheLayerNormFusionAndTheFirstNode) {
  auto o = exact(write("ln_gelu.onnx", ln_gelu()));
  o.inputs.generate.default_range = {-3, 3};
  auto r = bisect_optimizers(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  expect_one_minimal(o, *r);
  // Whatever ORT fused, each fused node names the original nodes it replaced, and the first
  // original node whose output differs is one of those or downstream of them.
  ASSERT_FALSE(r->fused.empty());
  for (const auto& f : r->fused) EXPECT_FALSE(f.replaced.empty()) << f.node;
  EXPECT_FALSE(r->first_divergent_node.empty());
}

TEST_F(BisectOptimizersTest, AFloat16MatMulAddChainIsBisected) {
  auto o = exact(write("mm_fp16.onnx", matmul_add_fp16()));
  auto r = bisect_optimizers(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  expect_one_minimal(o, *r);
  EXPECT_LE(r->search_sessions, r->session_bound) << api::json_text(to_json(*r));
}

TEST_F(BisectOptimizersTest, AgreeingLevelsEndAfterOneComparison) {
  auto o = exact(write("relu.onnx", parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y) {
  y = Relu(x)
})")));
  auto r = bisect_optimizers(o);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->outcome, BisectOutcome::kNoDifference);
  EXPECT_EQ(r->confirm_sessions, 2);
  EXPECT_EQ(r->search_sessions, 0);
  EXPECT_EQ(r->verdict_line.rfind("no optimization changes the outputs", 0), 0u) << r->verdict_line;
}

TEST_F(BisectOptimizersTest, AModelOrtCannotLoadIsAnError) {
  auto o = exact(write("custom.onnx", parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13, "com.example" : 1]>
g (float[2,3] x) => (float[2,3] y) {
  y = com.example.Mystery(x)
})")));
  auto r = bisect_optimizers(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kBackendError) << r.status().to_string();
  EXPECT_NE(r.status().message().find("could not load the model"), std::string::npos)
      << r.status().to_string();
  o.backend = {"reference", {}};
  auto wrong = bisect_optimizers(o);
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(BisectOptimizersTest, BackendOptionsListAndDisableTransformers) {
  const fs::path model = write("qdq_conv.onnx", qdq_conv());
  RunOptions run;
  run.model = model;
  run.backends = {{"onnxruntime", {{"opt", "all"}, {"list_transformers", "on"}}},
                  {"onnxruntime",
                   {{"opt", "all"},
                    {"list_transformers", "on"},
                    {"disable", "QDQSelectorActionTransformer+PadFusion"},
                    {"config.session.disable_double_qdq_remover", "1"}}}};
  auto r = api::run(run);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  const auto& backends = r->report.samples.front().backends;
  ASSERT_EQ(backends.size(), 2u);
  ASSERT_TRUE(backends[0].ok && backends[1].ok) << backends[1].error;
  const auto& all = backends[0].info.transformers_applied;
  const auto& fewer = backends[1].info.transformers_applied;
  EXPECT_NE(std::find(all.begin(), all.end(), "QDQSelectorActionTransformer"), all.end());
  EXPECT_EQ(std::find(fewer.begin(), fewer.end(), "QDQSelectorActionTransformer"), fewer.end());
  // ORT ignores a name it does not know (the rule is Pad_Fusion): onnxdbg says so.
  const auto& warnings = backends[1].info.warnings;
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.find("'PadFusion', which is no graph transformer") != std::string::npos;
  }));
  // --json records what changed the model.
  const auto j = to_json(*r);
  EXPECT_TRUE(j["backends"][0].contains("transformers_applied")) << j.dump(2);
  // A config entry without a key is refused when the session is made, naming the option.
  run.backends = {{"onnxruntime", {{"config.", "1"}}}};
  auto bad = api::run(run);
  ASSERT_TRUE(bad.has_value()) << bad.status().to_string();
  EXPECT_FALSE(bad->report.samples.front().backends.front().ok);
  EXPECT_NE(bad->report.samples.front().backends.front().error.find("'config.' needs a session "
                                                                    "config key"),
            std::string::npos)
      << bad->report.samples.front().backends.front().error;
}

}  // namespace
}  // namespace onnxdbg::api
