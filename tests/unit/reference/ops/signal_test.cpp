// Signal kernels (opset 17, DFT also 20): DFT (real, complex, onesided, inverse, dft_length,
// negative axis, DFT-20's axis input, IRFFT), STFT, the three windows and MelWeightMatrix's shape
// and peaks.
#include <cmath>

#include "op_test_util.h"

namespace onnxdbg::testing {
namespace {

const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 17]>\n";

TEST(Dft, RealSignal) {
  auto z = run_op(std::string(kHeader) + "g (float[1,4,1] x) => (float[1,4,2] z) { z = DFT(x) }",
                  {{"x", f32({1, 4, 1}, {1, 2, 3, 4})}});
  // 10, -2+2i, -2, -2-2i.
  expect_tensor_near(z, {1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2}, 1e-5);
  auto one =
      run_op(std::string(kHeader) +
                 "g (float[1,4,1] x) => (float[1,3,2] z) { z = DFT<onesided=1, axis=-2>(x) }",
             {{"x", f32({1, 4, 1}, {1, 2, 3, 4})}});
  expect_tensor_near(one, {1, 3, 2}, {10, 0, -2, 2, -2, 0}, 1e-5);
}

TEST(Dft, InverseRoundTripsAndLengthTruncates) {
  auto z = run_op(
      std::string(kHeader) + "g (float[1,4,2] x) => (float[1,4,2] z) { z = DFT<inverse=1>(x) }",
      {{"x", f32({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2})}});
  expect_tensor_near(z, {1, 4, 2}, {1, 0, 2, 0, 3, 0, 4, 0}, 1e-5);
  auto t = run_op(
      std::string(kHeader) + "g (float[1,4,1] x, int64 n) => (float[1,2,2] z) { z = DFT(x, n) }",
      {{"x", f32({1, 4, 1}, {1, 2, 3, 4})}, {"n", Tensor::scalar<int64_t>(2)}});
  expect_tensor_near(t, {1, 2, 2}, {3, 0, -1, 0}, 1e-5);
  auto err =
      run_op_error(std::string(kHeader) + "g (float[1,4,3] x) => (float[1,4,2] z) { z = DFT(x) }",
                   {{"x", f32({1, 4, 3}, std::vector<float>(12, 0))}});
  EXPECT_NE(err.find("[..., signal, 1]"), std::string::npos) << err;
}

const char* kHeader20 = "<ir_version: 9, opset_import: [\"\" : 20]>\n";

TEST(Dft, Version20TakesAxisAsInput) {
  // x[b, t] = [1, 2, 3, 4] for b = 0 and [1, 0, 0, 0] for b = 1, as [2, 4, 1].
  const Tensor x = f32({2, 4, 1}, {1, 2, 3, 4, 1, 0, 0, 0});
  // No axis input: -2, the signal axis. DFT of [1, 2, 3, 4] is 10, -2+2i, -2, -2-2i; of an
  // impulse, all ones.
  auto z = run_op(std::string(kHeader20) + "g (float[2,4,1] x) => (float[2,4,2] z) { z = DFT(x) }",
                  {{"x", x}});
  expect_tensor_near(z, {2, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2, 1, 0, 1, 0, 1, 0, 1, 0}, 1e-5);
  // axis = 0: a length-2 transform across the batch: sums and differences of the two rows.
  auto a0 = run_op(std::string(kHeader20) +
                       "g (float[2,4,1] x, int64 axis) => (float[2,4,2] z) { z = DFT(x, , axis) }",
                   {{"x", x}, {"axis", Tensor::scalar<int64_t>(0)}});
  expect_tensor_near(a0, {2, 4, 2}, {2, 0, 2, 0, 3, 0, 4, 0, 0, 0, 2, 0, 3, 0, 4, 0}, 1e-5);
  // axis = 1 with dft_length 2 and onesided: bins 0 and 1 of [1, 2] and of [1, 0].
  auto one =
      run_op(std::string(kHeader20) +
                 "g (float[2,4,1] x, int64 n, int64 axis) => (float[2,2,2] z) { z = "
                 "DFT<onesided=1>(x, n, axis) }",
             {{"x", x}, {"n", Tensor::scalar<int64_t>(2)}, {"axis", Tensor::scalar<int64_t>(1)}});
  expect_tensor_near(one, {2, 2, 2}, {3, 0, -1, 0, 1, 0, 1, 0}, 1e-5);
  auto err = run_op_error(std::string(kHeader20) +
                              "g (float[2,4,1] x, int64 axis) => (float[2,4,2] z) { z = DFT(x, , "
                              "axis) }",
                          {{"x", x}, {"axis", Tensor::scalar<int64_t>(2)}});
  EXPECT_NE(err.find("axis 2 is out of range"), std::string::npos) << err;
}

TEST(Dft, InverseOnesidedIsRealInverse) {
  // The half spectrum 10, -2+2i, -2 of [1, 2, 3, 4] back to 4 real samples (2 * (3 - 1)).
  auto z =
      run_op(std::string(kHeader20) +
                 "g (float[1,3,2] x) => (float[1,4,1] z) { z = DFT<inverse=1, onesided=1>(x) }",
             {{"x", f32({1, 3, 2}, {10, 0, -2, 2, -2, 0})}});
  expect_tensor_near(z, {1, 4, 1}, {1, 2, 3, 4}, 1e-5);
  // dft_length 3 reads bins 0 and 1 only: (10 + 2 * Re((-2+2i) w^t)) / 3, w = exp(2 pi i / 3).
  auto odd =
      run_op(std::string(kHeader20) +
                 "g (float[1,3,2] x, int64 n) => (float[1,3,1] z) { z = DFT<inverse=1, "
                 "onesided=1>(x, n) }",
             {{"x", f32({1, 3, 2}, {10, 0, -2, 2, -2, 0})}, {"n", Tensor::scalar<int64_t>(3)}});
  const double s3 = std::sqrt(3.0);
  expect_tensor_near(odd, {1, 3, 1},
                     {(10 - 4) / 3.0, (10 + 2 * (1 - s3)) / 3.0, (10 + 2 * (1 + s3)) / 3.0}, 1e-5);
  auto err = run_op_error(std::string(kHeader20) +
                              "g (float[1,4,1] x) => (float[1,6,1] z) { z = DFT<inverse=1, "
                              "onesided=1>(x) }",
                          {{"x", f32({1, 4, 1}, {1, 2, 3, 4})}});
  EXPECT_NE(err.find("complex input"), std::string::npos) << err;
}

TEST(Stft, FramesWithoutWindow) {
  auto z = run_op(std::string(kHeader) +
                      "g (float[1,4,1] x, int64 step, int64 len) => (float[1,2,2,2] z) { z = "
                      "STFT(x, step, , len) }",
                  {{"x", f32({1, 4, 1}, {1, 2, 3, 4})},
                   {"step", Tensor::scalar<int64_t>(2)},
                   {"len", Tensor::scalar<int64_t>(2)}});
  // Frames [1, 2] and [3, 4]: bins (sum, difference).
  expect_tensor_near(z, {1, 2, 2, 2}, {3, 0, -1, 0, 7, 0, -1, 0}, 1e-5);
  auto w = run_op(std::string(kHeader) +
                      "g (float[1,4,1] x, int64 step, float[2] win) => (float[1,2,2,2] z) { z = "
                      "STFT(x, step, win) }",
                  {{"x", f32({1, 4, 1}, {1, 2, 3, 4})},
                   {"step", Tensor::scalar<int64_t>(2)},
                   {"win", f32({2}, {1, 0})}});
  expect_tensor_near(w, {1, 2, 2, 2}, {1, 0, 1, 0, 3, 0, 3, 0}, 1e-5);
}

TEST(Windows, PeriodicAndSymmetric) {
  auto hann = run_op(std::string(kHeader) + "g (int64 n) => (float[4] z) { z = HannWindow(n) }",
                     {{"n", Tensor::scalar<int64_t>(4)}});
  expect_tensor_near(hann, {4}, {0, 0.5, 1, 0.5}, 1e-6);
  auto sym = run_op(
      std::string(kHeader) +
          "g (int64 n) => (double[3] z) { z = HannWindow<periodic=0, output_datatype=11>(n) }",
      {{"n", Tensor::scalar<int64_t>(3)}});
  ASSERT_EQ(sym.dtype(), DType::kDouble);
  expect_tensor_near(sym, {3}, {0, 1, 0}, 1e-12);
  auto ham = run_op(std::string(kHeader) + "g (int32 n) => (float[2] z) { z = HammingWindow(n) }",
                    {{"n", Tensor::scalar<int32_t>(2)}});
  expect_tensor_near(ham, {2}, {4.0 / 46, 1}, 1e-6);
  auto bl = run_op(std::string(kHeader) + "g (int64 n) => (float[4] z) { z = BlackmanWindow(n) }",
                   {{"n", Tensor::scalar<int64_t>(4)}});
  expect_tensor_near(bl, {4}, {0, 0.34, 1, 0.34}, 1e-6);
  auto empty = run_op(std::string(kHeader) + "g (int64 n) => (float[0] z) { z = HannWindow(n) }",
                      {{"n", Tensor::scalar<int64_t>(0)}});
  expect_tensor_near(empty, {0}, {});
}

TEST(MelWeightMatrix, TrianglesPeakAtOne) {
  auto z =
      run_op(std::string(kHeader) +
                 "g (int64 bins, int64 dft, int64 rate, float lo, float hi) => (float[9,4] z) {"
                 " z = MelWeightMatrix(bins, dft, rate, lo, hi) }",
             {{"bins", Tensor::scalar<int64_t>(4)},
              {"dft", Tensor::scalar<int64_t>(16)},
              {"rate", Tensor::scalar<int64_t>(8192)},
              {"lo", Tensor::scalar<float>(0)},
              {"hi", Tensor::scalar<float>(4096)}});
  ASSERT_EQ(shape_to_string(z.shape()), "9x4");
  for (int64_t band = 0; band < 4; ++band) {
    double peak = 0;
    for (int64_t bin = 0; bin < 9; ++bin) peak = std::max(peak, z.get_as_double(bin * 4 + band));
    EXPECT_DOUBLE_EQ(peak, 1.0) << band;
  }
}

}  // namespace
}  // namespace onnxdbg::testing
