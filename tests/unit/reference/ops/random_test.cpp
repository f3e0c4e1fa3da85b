// Generator kernels: seeded values equal numpy's legacy RandomState (the values below are
// numpy.random.RandomState(0).rand(3) and .randn(3)), repeatability, dtypes, shapes and ranges
// for unseeded draws, Bernoulli's extremes and Multinomial's degenerate distributions, and
// unseeded draws repeating run to run (seeded by InterpreterOptions::random_seed and the node).
#include "backends/backend.h"
#include "backends/backend_test_util.h"
#include "op_test_util.h"

namespace onnxdbg::testing {
namespace {

TEST(RandomUniform, SeededMatchesNumpy) {
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (float[3] z) { z = RandomUniform<shape=[3], seed=0.0>() })",
                  {});
  expect_tensor_near(z, {3}, {0.5488135, 0.71518937, 0.60276338}, 1e-7);
  auto scaled = run_op(R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (double[3] z) { z = RandomUniform<shape=[3], seed=0.0, low=-1.0, high=1.0, dtype=11>() })",
                       {});
  ASSERT_EQ(scaled.dtype(), DType::kDouble);
  expect_tensor_near(scaled, {3}, {0.0976270, 0.4303787, 0.2055268}, 1e-6);
}

TEST(RandomNormal, SeededMatchesNumpy) {
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (float[3] z) { z = RandomNormal<shape=[3], seed=0.0>() })",
                  {});
  expect_tensor_near(z, {3}, {1.76405235, 0.40015721, 0.97873798}, 1e-6);
  auto shifted = run_op(R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (float[1] z) { z = RandomNormal<shape=[1], seed=0.0, mean=10.0, scale=2.0>() })",
                        {});
  expect_tensor_near(shifted, {1}, {13.5281047}, 1e-5);
}

TEST(RandomLike, ShapeDtypeAndRangeWithoutSeed) {
  std::vector<float> zeros(100, 0.0f);
  auto u = run_op(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[10,10] x) => (double[10,10] z) { z = RandomUniformLike<low=2.0, high=3.0, dtype=11>(x) })",
                  {{"x", f32({10, 10}, zeros)}});
  ASSERT_EQ(u.dtype(), DType::kDouble);
  ASSERT_EQ(shape_to_string(u.shape()), "10x10");
  for (double v : values(u)) {
    EXPECT_GE(v, 2.0);
    EXPECT_LT(v, 3.0);
  }
  auto n = run_op(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[10,10] x) => (float[10,10] z) { z = RandomNormalLike(x) })",
                  {{"x", f32({10, 10}, zeros)}});
  ASSERT_EQ(n.dtype(), DType::kFloat);
  double mean = 0;
  for (double v : values(n)) mean += v / 100;
  EXPECT_LT(std::abs(mean), 0.6);  // 6 standard errors
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 17]>
g (int32[2] x) => (float[2] z) { z = RandomNormalLike(x) })",
                          {{"x", tensor<int32_t>({2}, {1, 2})}});
  EXPECT_NE(err.find("without a dtype attribute"), std::string::npos) << err;
}

TEST(Bernoulli, SeededAndExtremes) {
  // Uniforms 0.549, 0.715, 0.603 against p = 0.6: 1 where U <= p.
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3] x) => (float[3] z) { z = Bernoulli<seed=0.0>(x) })",
                  {{"x", f32({3}, {0.6f, 0.6f, 0.6f})}});
  EXPECT_EQ(values(z), (std::vector<double>{1, 0, 0}));
  auto ext = run_op(R"(<ir_version: 8, opset_import: ["" : 17]>
g (double[4] x) => (int32[4] z) { z = Bernoulli<dtype=6>(x) })",
                    {{"x", tensor<double>({4}, {0, 1, 0, 1})}});
  ASSERT_EQ(ext.dtype(), DType::kInt32);
  EXPECT_EQ(values(ext), (std::vector<double>{0, 1, 0, 1}));
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1] x) => (float[1] z) { z = Bernoulli(x) })",
                          {{"x", f32({1}, {1.5f})}});
  EXPECT_NE(err.find("outside [0, 1]"), std::string::npos) << err;
}

TEST(Multinomial, DegenerateDistributionsAndRepeatability) {
  const float inf = std::numeric_limits<float>::infinity();
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,2] x) => (int32[2,5] z) { z = Multinomial<sample_size=5>(x) })",
                  {{"x", f32({2, 2}, {0, -inf, -inf, 0})}});
  ASSERT_EQ(z.dtype(), DType::kInt32);
  EXPECT_EQ(values(z), (std::vector<double>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}));
  const std::string seeded = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (int64[1,20] z) { z = Multinomial<sample_size=20, seed=3.0, dtype=7>(x) })";
  auto a = run_op(seeded, {{"x", f32({1, 3}, {0, 0, 0})}});
  auto b = run_op(seeded, {{"x", f32({1, 3}, {0, 0, 0})}});
  ASSERT_EQ(a.dtype(), DType::kInt64);
  EXPECT_EQ(values(a), values(b));
  for (double v : values(a)) EXPECT_TRUE(v == 0 || v == 1 || v == 2);
}

// Every output of one run of `model` with `seed`, as doubles by name.
std::map<std::string, std::vector<double>> draw(const onnx::ModelProto& model, uint64_t seed,
                                                int runs = 1) {
  reference::InterpreterOptions options;
  options.random_seed = seed;
  auto in = reference::Interpreter::create(model, {}, options);
  EXPECT_TRUE(in.has_value()) << in.status().to_string();
  std::map<std::string, std::vector<double>> out;
  for (int r = 0; r < runs && in; ++r) {
    auto res = (*in)->run({{"x", f32({1, 4}, {0.5f, 0.5f, 0.5f, 0.5f})}});
    EXPECT_TRUE(res.has_value()) << res.status().to_string();
    if (!res) break;
    for (auto& [name, t] : *res) out[name] = values(t);
  }
  return out;
}

TEST(RandomOps, UnseededDrawsRepeatRunToRun) {
  const auto m = parse_text_model(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,4] x) => (float[1,4] a, float[1,4] a2, float[1,4] b, float[1,4] c, float[1,4] d,
                     float[1,4] e, int32[1,8] f) {
  a = RandomNormal<shape=[1,4]>()
  a2 = RandomNormal<shape=[1,4]>()
  b = RandomUniform<shape=[1,4]>()
  c = RandomNormalLike(x)
  d = RandomUniformLike(x)
  e = Bernoulli(x)
  f = Multinomial<sample_size=8>(x)
})");
  // Two sessions, and two runs of one session, give the same values bit for bit.
  const auto first = draw(m, 0), again = draw(m, 0), second_run = draw(m, 0, 2);
  ASSERT_EQ(first.size(), 7u);
  EXPECT_EQ(first, again);
  EXPECT_EQ(first, second_run);
  // The values depend on the run seed and on the node: two identical unnamed nodes differ.
  EXPECT_NE(first.at("a"), first.at("a2"));
  const auto other = draw(m, 12345);
  EXPECT_NE(first.at("a"), other.at("a"));
  EXPECT_NE(first.at("b"), other.at("b"));
  // A named node is seeded by its name, so its values survive edits elsewhere in the graph.
  auto named = m;
  named.mutable_graph()->mutable_node(1)->set_name("noise");
  auto moved = named;
  moved.mutable_graph()->mutable_node()->SwapElements(0, 1);
  EXPECT_EQ(draw(named, 0).at("a2"), draw(moved, 0).at("a2"));
}

TEST(RandomOps, ReferenceBackendOptionRandomSeed) {
  ModelDir dir;
  const auto path = dir.write_model(R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (float[3] z) { z = RandomUniform<shape=[3]>() })");
  auto run_with = [&](const std::string& seed) -> Expected<SessionRunResult> {
    ODB_ASSIGN_OR_RETURN(auto backend,
                         create_backend(BackendSpec{"reference", {{"random_seed", seed}}}));
    ODB_ASSIGN_OR_RETURN(auto session, backend->load(path));
    return session->run({});
  };
  auto a = run_with("7"), b = run_with("7"), c = run_with("8");
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  ASSERT_TRUE(b.has_value() && c.has_value());
  EXPECT_EQ(values(a->outputs.at("z")), values(b->outputs.at("z")));
  EXPECT_NE(values(a->outputs.at("z")), values(c->outputs.at("z")));
  auto bad = run_with("-1");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().to_string().find("random_seed must be a non-negative integer"),
            std::string::npos)
      << bad.status().to_string();
}

}  // namespace
}  // namespace onnxdbg::testing
