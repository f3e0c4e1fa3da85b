// MatMul (batch broadcasting, 1-D operands, integers) and Gemm (transA/transB, alpha/beta, C
// broadcasting) against naive loops written here.
#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;

std::vector<float> matmul_wave(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = std::cos(static_cast<float>(i) * 0.9f) * 2.0f;
  return v;
}

TEST(MatMul, BatchDimsBroadcastLikeNumpy) {
  // A [2,1,2,3] x B [3,3,2] -> [2,3,2,2]: A broadcasts over B's batch of 3, B over A's batch of 2.
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,1,2,3] a, float[3,3,2] b) => (float[2,3,2,2] y) { y = MatMul(a, b) }
)");
  auto a = matmul_wave(12), b = matmul_wave(18);
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
          double acc = 0;
          for (int k = 0; k < 3; ++k)
            acc += static_cast<double>(a[static_cast<size_t>(i * 6 + r * 3 + k)]) *
                   b[static_cast<size_t>(j * 6 + k * 2 + c)];
          want.push_back(acc);
        }
  auto r = run_reference(model, {{"a", Tensor::from_vector<float>({2, 1, 2, 3}, a)},
                                 {"b", Tensor::from_vector<float>({3, 3, 2}, b)}});
  expect_tensor_near(r["y"], {2, 3, 2, 2}, want, 1e-5, 1e-5);
}

TEST(MatMul, SharedRightMatrixFoldsTheBatch) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3,2,4] a, float[4,5] b) => (float[3,2,5] y) { y = MatMul(a, b) }
)");
  auto a = matmul_wave(24), b = matmul_wave(20);
  std::vector<double> want;
  for (int row = 0; row < 6; ++row)
    for (int c = 0; c < 5; ++c) {
      double acc = 0;
      for (int k = 0; k < 4; ++k)
        acc += static_cast<double>(a[static_cast<size_t>(row * 4 + k)]) *
               b[static_cast<size_t>(k * 5 + c)];
      want.push_back(acc);
    }
  auto r = run_reference(model, {{"a", Tensor::from_vector<float>({3, 2, 4}, a)},
                                 {"b", Tensor::from_vector<float>({4, 5}, b)}});
  expect_tensor_near(r["y"], {3, 2, 5}, want, 1e-5, 1e-5);
}

TEST(MatMul, OneDimensionalOperandsArePromotedAndDropped) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3] v, float[2,3,2] b, float[2,3] m) => (float[2,2] vb, float[2] mv, float[] vv) {
  vb = MatMul(v, b)
  mv = MatMul(m, v)
  vv = MatMul(v, v)
}
)");
  auto r = run_reference(
      model, {{"v", Tensor::from_vector<float>({3}, {1, 2, 3})},
              {"b", Tensor::from_vector<float>({2, 3, 2}, {1, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2})},
              {"m", Tensor::from_vector<float>({2, 3}, {1, 1, 1, 0, 1, 0})}});
  expect_tensor_near(r["vb"], {2, 2}, {4, 5, 12, 12});
  expect_tensor_near(r["mv"], {2}, {6, 2});
  expect_tensor_near(r["vv"], {}, {14});
}

TEST(MatMul, IntegersAndDoubles) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int32[2,2] a, int32[2,2] b, double[1,2] c, double[2,1] d) => (int32[2,2] y, double[1,1] z) {
  y = MatMul(a, b)
  z = MatMul(c, d)
}
)");
  auto r = run_reference(model, {{"a", Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4})},
                                 {"b", Tensor::from_vector<int32_t>({2, 2}, {5, 6, 7, 8})},
                                 {"c", Tensor::from_vector<double>({1, 2}, {0.1, 0.2})},
                                 {"d", Tensor::from_vector<double>({2, 1}, {3, 4})}});
  ASSERT_EQ(r["y"].dtype(), DType::kInt32);
  expect_tensor_near(r["y"], {2, 2}, {19, 22, 43, 50});
  expect_tensor_near(r["z"], {1, 1}, {1.1}, 1e-12, 1e-12);
}

TEST(MatMul, InnerDimensionMismatchNamesBothShapes) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] a, float[4,2] b) => (float[2,2] y) { y = MatMul(a, b) }
)");
  auto msg = run_reference_error(
      model, {{"a", Tensor(DType::kFloat, {2, 3})}, {"b", Tensor(DType::kFloat, {4, 2})}});
  EXPECT_NE(msg.find("inner dimensions differ"), std::string::npos) << msg;
  EXPECT_NE(msg.find("A 2x3, B 4x2"), std::string::npos) << msg;
}

// Naive Gemm: alpha * op(A) op(B) + beta * C with C broadcast from shape cs.
std::vector<double> naive_gemm(const std::vector<float>& a, const std::vector<float>& b,
                               const std::vector<float>& c, const Shape& cs, int64_t m, int64_t n,
                               int64_t k, bool ta, bool tb, double alpha, double beta) {
  std::vector<double> y;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        acc += static_cast<double>(a[static_cast<size_t>(ta ? kk * m + i : i * k + kk)]) *
               b[static_cast<size_t>(tb ? j * k + kk : kk * n + j)];
      double cv = 0;
      if (!c.empty()) {
        const int64_t ci = cs.size() == 2   ? (cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j)
                           : cs.size() == 1 ? (cs[0] == 1 ? 0 : j)
                                            : 0;
        cv = c[static_cast<size_t>(ci)];
      }
      y.push_back(alpha * acc + beta * cv);
    }
  return y;
}

TEST(Gemm, TransBWithAlphaBetaAndRowBias) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] a, float[4,3] b, float[4] c) => (float[2,4] y) { y = Gemm<transB=1, alpha=0.5, beta=2.0>(a, b, c) }
)");
  auto a = matmul_wave(6), b = matmul_wave(12), c = std::vector<float>{1, 2, 3, 4};
  auto want = naive_gemm(a, b, c, {4}, 2, 4, 3, false, true, 0.5, 2.0);
  auto r = run_reference(model, {{"a", Tensor::from_vector<float>({2, 3}, a)},
                                 {"b", Tensor::from_vector<float>({4, 3}, b)},
                                 {"c", Tensor::from_vector<float>({4}, c)}});
  expect_tensor_near(r["y"], {2, 4}, want, 1e-5, 1e-5);
}

TEST(Gemm, TransAWithColumnBiasAndWithoutC) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3,2] a, float[3,4] b, float[2,1] c) => (float[2,4] y, float[2,4] z) {
  y = Gemm<transA=1>(a, b, c)
  z = Gemm<transA=1>(a, b)
}
)");
  auto a = matmul_wave(6), b = matmul_wave(12), c = std::vector<float>{10, -10};
  auto r = run_reference(model, {{"a", Tensor::from_vector<float>({3, 2}, a)},
                                 {"b", Tensor::from_vector<float>({3, 4}, b)},
                                 {"c", Tensor::from_vector<float>({2, 1}, c)}});
  expect_tensor_near(r["y"], {2, 4}, naive_gemm(a, b, c, {2, 1}, 2, 4, 3, true, false, 1, 1), 1e-5,
                     1e-5);
  expect_tensor_near(r["z"], {2, 4}, naive_gemm(a, b, {}, {}, 2, 4, 3, true, false, 1, 1), 1e-5,
                     1e-5);
}

TEST(Gemm, BiasThatDoesNotBroadcastIsAModelError) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] a, float[3,4] b, float[3] c) => (float[2,4] y) { y = Gemm(a, b, c) }
)");
  auto msg = run_reference_error(model, {{"a", Tensor(DType::kFloat, {2, 3})},
                                         {"b", Tensor(DType::kFloat, {3, 4})},
                                         {"c", Tensor(DType::kFloat, {3})}});
  EXPECT_NE(msg.find("C does not broadcast to 2x4"), std::string::npos) << msg;
}

}  // namespace
}  // namespace onnxdbg

namespace onnxdbg {
namespace {

TEST(MatMulInteger, SubtractsPerRowAndScalarZeroPoints) {
  auto model = testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 10]>
g (uint8[2,2] a, uint8[2,2] b, uint8[2] za, uint8 zb) => (int32[2,2] y) { y = MatMulInteger(a, b, za, zb) }
)");
  auto r =
      testing::run_reference(model, {{"a", Tensor::from_vector<uint8_t>({2, 2}, {10, 12, 5, 9})},
                                     {"b", Tensor::from_vector<uint8_t>({2, 2}, {3, 4, 5, 6})},
                                     {"za", Tensor::from_vector<uint8_t>({2}, {10, 5})},
                                     {"zb", Tensor::scalar<uint8_t>(4)}});
  // A - za = [[0, 2], [0, 4]], B - zb = [[-1, 0], [1, 2]].
  ASSERT_EQ(r["y"].dtype(), DType::kInt32);
  testing::expect_tensor_near(r["y"], {2, 2}, {2, 4, 4, 8});
}

}  // namespace
}  // namespace onnxdbg
