// Normalisation kernels (BatchNormalization in inference and training mode, InstanceNormalization,
// LayerNormalization with its optional outputs, LRN, MeanVarianceNormalization, LpNormalization)
// and Dropout, against formulas evaluated here.
#include <cmath>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;

std::vector<float> norm_wave(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = std::sin(static_cast<float>(i) * 1.3f) * 3.0f + 0.5f;
  return v;
}

TEST(BatchNormalization, InferenceUsesTheGivenStatistics) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2,2,3] x, float[2] s, float[2] b, float[2] m, float[2] v) => (float[2,2,3] y) {
  y = BatchNormalization<epsilon=0.01>(x, s, b, m, v)
}
)");
  auto x = norm_wave(12);
  const std::vector<float> s{2, 0.5f}, b{1, -1}, m{0.5f, -0.25f}, v{4, 0.09f};
  std::vector<double> want;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < 3; ++i)
        want.push_back(s[c] * (x[static_cast<size_t>((n * 2 + c) * 3 + i)] - m[c]) /
                           std::sqrt(v[c] + 0.01) +
                       b[c]);
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({2, 2, 3}, x)},
                                 {"s", Tensor::from_vector<float>({2}, s)},
                                 {"b", Tensor::from_vector<float>({2}, b)},
                                 {"m", Tensor::from_vector<float>({2}, m)},
                                 {"v", Tensor::from_vector<float>({2}, v)}});
  expect_tensor_near(r["y"], {2, 2, 3}, want, 1e-5, 1e-5);
}

TEST(BatchNormalization, TrainingModeUsesBatchStatisticsAndUpdatesRunningOnes) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2,1,2] x, float[1] s, float[1] b, float[1] m, float[1] v) => (float[2,1,2] y, float[1] rm, float[1] rv) {
  y, rm, rv = BatchNormalization<training_mode=1, momentum=0.5, epsilon=0.0>(x, s, b, m, v)
}
)");
  // Batch values 1, 3, 5, 7: mean 4, population variance 5.
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({2, 1, 2}, {1, 3, 5, 7})},
                                 {"s", Tensor::from_vector<float>({1}, {1})},
                                 {"b", Tensor::from_vector<float>({1}, {0})},
                                 {"m", Tensor::from_vector<float>({1}, {0})},
                                 {"v", Tensor::from_vector<float>({1}, {1})}});
  const double sd = std::sqrt(5.0);
  expect_tensor_near(r["y"], {2, 1, 2}, {-3 / sd, -1 / sd, 1 / sd, 3 / sd});
  expect_tensor_near(r["rm"], {1}, {2});
  expect_tensor_near(r["rv"], {1}, {3});
}

TEST(InstanceNormalization, EachPlaneUsesItsOwnStatistics) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 6]>
g (float[1,2,4] x, float[2] s, float[2] b) => (float[1,2,4] y) { y = InstanceNormalization(x, s, b) }
)");
  auto r = run_reference(
      model, {{"x", Tensor::from_vector<float>({1, 2, 4}, {1, 2, 3, 4, 10, 10, 10, 10})},
              {"s", Tensor::from_vector<float>({2}, {2, 1})},
              {"b", Tensor::from_vector<float>({2}, {0, 7})}});
  const double sd = std::sqrt(1.25 + 1e-5);
  expect_tensor_near(r["y"], {1, 2, 4}, {-3 / sd, -1 / sd, 1 / sd, 3 / sd, 7, 7, 7, 7}, 1e-5, 1e-5);
}

TEST(LayerNormalization, NormalisesTrailingDimsAndReturnsMeanAndInvStdDev) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,2,2] x, float[2,2] s, float[2] b) => (float[2,2,2] y, float[2,1,1] mean, float[2,1,1] inv) {
  y, mean, inv = LayerNormalization<axis=1, epsilon=0.001>(x, s, b)
}
)");
  auto x = norm_wave(8);
  const std::vector<float> s{1, 2, 3, 4}, b{0.5f, -0.5f};
  std::vector<double> want, means, invs;
  for (int n = 0; n < 2; ++n) {
    double mu = 0, var = 0;
    for (int i = 0; i < 4; ++i) mu += x[static_cast<size_t>(n * 4 + i)] / 4.0;
    for (int i = 0; i < 4; ++i) var += std::pow(x[static_cast<size_t>(n * 4 + i)] - mu, 2) / 4.0;
    const double inv = 1 / std::sqrt(var + 0.001);
    for (int i = 0; i < 4; ++i)
      want.push_back((x[static_cast<size_t>(n * 4 + i)] - mu) * inv * s[i] + b[i % 2]);
    means.push_back(mu);
    invs.push_back(inv);
  }
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({2, 2, 2}, x)},
                                 {"s", Tensor::from_vector<float>({2, 2}, s)},
                                 {"b", Tensor::from_vector<float>({2}, b)}});
  expect_tensor_near(r["y"], {2, 2, 2}, want, 1e-5, 1e-5);
  expect_tensor_near(r["mean"], {2, 1, 1}, means, 1e-5, 1e-5);
  expect_tensor_near(r["inv"], {2, 1, 1}, invs, 1e-5, 1e-5);
}

TEST(LRN, SumsSquaresOverNeighbouringChannels) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,1,2] x) => (float[1,4,1,2] y) { y = LRN<size=3, alpha=0.3, beta=0.6, bias=2.0>(x) }
)");
  auto x = norm_wave(8);
  std::vector<double> want;
  for (int c = 0; c < 4; ++c)
    for (int i = 0; i < 2; ++i) {
      double sq = 0;
      for (int k = std::max(0, c - 1); k <= std::min(3, c + 1); ++k)
        sq += std::pow(x[static_cast<size_t>(k * 2 + i)], 2);
      want.push_back(x[static_cast<size_t>(c * 2 + i)] / std::pow(2.0 + 0.3 / 3 * sq, 0.6));
    }
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({1, 4, 1, 2}, x)}});
  expect_tensor_near(r["y"], {1, 4, 1, 2}, want, 1e-5, 1e-5);
}

TEST(MeanVarianceNormalization, DefaultAxesNormalisePerChannel) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,2,1,1] x) => (float[2,2,1,1] y) { y = MeanVarianceNormalization(x) }
)");
  // Channel 0 holds 1 and 3 (mean 2, std 1); channel 1 holds 5 and 5 (std 0).
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({2, 2, 1, 1}, {1, 5, 3, 5})}});
  expect_tensor_near(r["y"], {2, 2, 1, 1}, {-1, 0, 1, 0});
}

TEST(Dropout, InferenceIsIdentityWithAnAllTrueMask) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3] x, float r) => (float[3] y, bool[3] mask) { y, mask = Dropout(x, r) }
)");
  auto r = run_reference(
      model, {{"x", Tensor::from_vector<float>({3}, {1, -2, 3})}, {"r", Tensor::scalar(0.7f)}});
  expect_tensor_near(r["y"], {3}, {1, -2, 3});
  ASSERT_EQ(r["mask"].dtype(), DType::kBool);
  expect_tensor_near(r["mask"], {3}, {1, 1, 1});
}

TEST(Dropout, SeededTrainingModeScalesTheKeptElements) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[64] x, float r, bool t) => (float[64] y, bool[64] mask) { y, mask = Dropout<seed=3>(x, r, t) }
)");
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) + 1.0f;
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({64}, x)},
                                 {"r", Tensor::scalar(0.5f)},
                                 {"t", Tensor::scalar(true)}});
  ASSERT_EQ(r["mask"].numel(), 64);
  int kept = 0;
  for (int64_t i = 0; i < 64; ++i) {
    const bool keep = r["mask"].data<bool>()[i];
    kept += keep;
    EXPECT_EQ(r["y"].data<float>()[i], keep ? x[static_cast<size_t>(i)] * 2.0f : 0.0f) << i;
  }
  EXPECT_GT(kept, 16);
  EXPECT_LT(kept, 48);
}

TEST(Dropout, UnseededTrainingModeIsUnsupported) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3] x, float r, bool t) => (float[3] y) { y = Dropout(x, r, t) }
)");
  auto msg = run_reference_error(model, {{"x", Tensor::from_vector<float>({3}, {1, 2, 3})},
                                         {"r", Tensor::scalar(0.5f)},
                                         {"t", Tensor::scalar(true)}});
  EXPECT_NE(msg.find("training mode"), std::string::npos) << msg;
}

TEST(LpNormalization, L1AndL2AlongAnAxis) {
  auto run = [](const std::string& attrs, int opset) {
    return testing::run_op("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
                               "]>\n g (float[2,2] x) => (float[2,2] z) { z = LpNormalization " +
                               attrs + " (x) }",
                           {{"x", testing::f32({2, 2}, {3, 4, -6, 8})}});
  };
  // Default p = 2 along the last axis: rows (3, 4) and (-6, 8) have norms 5 and 10.
  testing::expect_tensor_near(run("", 22), {2, 2}, {0.6, 0.8, -0.6, 0.8});
  testing::expect_tensor_near(run("", 1), {2, 2}, {0.6, 0.8, -0.6, 0.8});
  // p = 1 along axis 0: columns have L1 norms 9 and 12.
  testing::expect_tensor_near(run("<p = 1, axis = 0>", 22), {2, 2},
                              {3.0 / 9, 4.0 / 12, -6.0 / 9, 8.0 / 12});
  // A zero vector stays zero.
  auto zero = testing::run_op(R"(<ir_version: 8, opset_import: ["" : 22]>
    g (float[1,2] x) => (float[1,2] z) { z = LpNormalization(x) })",
                              {{"x", testing::f32({1, 2}, {0, 0})}});
  testing::expect_tensor_near(zero, {1, 2}, {0, 0});
  auto err = testing::run_op_error(R"(<ir_version: 8, opset_import: ["" : 22]>
    g (float[2,2] x) => (float[2,2] z) { z = LpNormalization <p = 3> (x) })",
                                   {{"x", testing::f32({2, 2}, {3, 4, -6, 8})}});
  EXPECT_NE(err.find("attribute p must be 1 or 2, got 3"), std::string::npos) << err;
}

}  // namespace
}  // namespace onnxdbg
