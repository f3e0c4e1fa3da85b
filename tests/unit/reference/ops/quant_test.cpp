// Quantization kernels against hand-computed values: QuantizeLinear (round half to even,
// saturation, per-axis, blocked, 16-bit, int4/int2 clamping, float8 saturate), DequantizeLinear
// (blocked int4, float8, float4), DynamicQuantizeLinear, QLinearMatMul, ConvInteger and
// QLinearConv.
#include <algorithm>
#include <cmath>

#include "op_test_util.h"

namespace onnxdbg::testing {
namespace {

// A tensor of narrow type `t` holding `v` (values the type represents exactly).
Tensor narrow(DType t, Shape shape, const std::vector<double>& v) {
  auto r = Tensor::make(t, std::move(shape));
  EXPECT_TRUE(r.has_value());
  for (size_t i = 0; i < v.size(); ++i) r->set_from_double(static_cast<int64_t>(i), v[i]);
  return std::move(*r);
}

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[6] x, float s, uint8 zp) => (uint8[6] z) { z = QuantizeLinear(x, s, zp) })";
  // x / 2 = 0, 0.5, 1.25, 1.75, -0.5, 500 -> 0, 0, 1, 2, -0, 500 (then + 128, saturated).
  auto z = run_op(m, {{"x", f32({6}, {0, 1, 2.5f, 3.5f, -1, 1000})},
                      {"s", Tensor::scalar<float>(2)},
                      {"zp", Tensor::scalar<uint8_t>(128)}});
  ASSERT_EQ(z.dtype(), DType::kUint8);
  EXPECT_EQ(values(z), (std::vector<double>{128, 128, 129, 130, 128, 255}));
  // Without a zero point the output is uint8 with zero point 0, so negatives clamp to 0.
  auto u = run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (float[3] x, float s) => (uint8[3] z) { z = QuantizeLinear(x, s) })",
                  {{"x", f32({3}, {-3, 3, 300})}, {"s", Tensor::scalar<float>(1)}});
  EXPECT_EQ(values(u), (std::vector<double>{0, 3, 255}));
  auto i8 = run_op(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[3] x, float s, int8 zp) => (int8[3] z) { z = QuantizeLinear(x, s, zp) })",
                   {{"x", f32({3}, {-300, 2.5f, 300})},
                    {"s", Tensor::scalar<float>(1)},
                    {"zp", Tensor::scalar<int8_t>(-1)}});
  ASSERT_EQ(i8.dtype(), DType::kInt8);
  EXPECT_EQ(values(i8), (std::vector<double>{-128, 1, 127}));
}

TEST(QuantizeLinear, PerAxisWithNegativeAxis) {
  for (int axis : {1, -2}) {
    auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,2] x, float[2] s, uint8[2] zp) => (uint8[1,2,2] z) { z = QuantizeLinear<axis=)" +
                        std::to_string(axis) + R"(>(x, s, zp) })",
                    {{"x", f32({1, 2, 2}, {2, 4, 2, 4})},
                     {"s", f32({2}, {1, 2})},
                     {"zp", tensor<uint8_t>({2}, {0, 10})}});
    EXPECT_EQ(values(z), (std::vector<double>{2, 4, 11, 12})) << axis;
  }
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,2] x, float[3] s) => (uint8[1,2,2] z) { z = QuantizeLinear(x, s) })",
                          {{"x", f32({1, 2, 2}, {2, 4, 2, 4})}, {"s", f32({3}, {1, 2, 3})}});
  EXPECT_NE(err.find("y_scale must be a scalar or a 1-D tensor of 2 values"), std::string::npos)
      << err;
}

TEST(DequantizeLinear, Uint8AndInt32) {
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 13]>
g (uint8[3] x, float s, uint8 zp) => (float[3] z) { z = DequantizeLinear(x, s, zp) })",
                  {{"x", tensor<uint8_t>({3}, {0, 128, 255})},
                   {"s", Tensor::scalar<float>(0.5f)},
                   {"zp", Tensor::scalar<uint8_t>(128)}});
  expect_tensor_near(z, {3}, {-64, 0, 63.5});
  auto i = run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (int32[2] x, float s) => (float[2] z) { z = DequantizeLinear(x, s) })",
                  {{"x", tensor<int32_t>({2}, {-5, 7})}, {"s", Tensor::scalar<float>(2)}});
  expect_tensor_near(i, {2}, {-10, 14});
  auto e = run_op(R"(<ir_version: 8, opset_import: ["" : 13]>
g (uint8[0] x, float s) => (float[0] z) { z = DequantizeLinear(x, s) })",
                  {{"x", tensor<uint8_t>({0}, {})}, {"s", Tensor::scalar<float>(2)}});
  expect_tensor_near(e, {0}, {});
}

TEST(DynamicQuantizeLinear, ScaleAndZeroPointFromTheRange) {
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 11]>
g (float[4] x) => (uint8[4] y, float s, uint8 zp) { y, s, zp = DynamicQuantizeLinear(x) })";
  auto r = run_reference(parse_text_model(m), {{"x", f32({4}, {0, 2, -1, 4})}});
  // Range [-1, 4]: scale 5/255, zero point 51.
  expect_tensor_near(r["s"], {}, {5.0 / 255}, 1e-7);
  EXPECT_EQ(values(r["zp"]), (std::vector<double>{51}));
  EXPECT_EQ(values(r["y"]), (std::vector<double>{51, 153, 0, 255}));
}

// A long input (the vector loops and their tail), ties of x / scale, NaN (0) and both saturation
// ends against the spec's formula in float: saturate(round_half_even(x / scale) + zero point).
TEST(DynamicQuantizeLinear, LongInputsMatchTheFormula) {
  std::vector<float> x;
  for (int i = 0; i < 1003; ++i) x.push_back(static_cast<float>((i * 37) % 801 - 300) / 100);
  const float scale = (5.0f - -3.0f) / 255.0f;  // x spans [-3, 5]
  for (int j = 0; j < 40; ++j)
    x[static_cast<size_t>(j * 25)] = (static_cast<float>(j) + 0.5f) * scale;
  x[3] = std::nanf("");
  x[500] = -3.0f;
  x[501] = 5.0f;
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 11]>
g (float[1003] x) => (uint8[1003] y, float s, uint8 zp) { y, s, zp = DynamicQuantizeLinear(x) })";
  auto r = run_reference(parse_text_model(m), {{"x", f32({1003}, x)}});
  ASSERT_EQ(r["s"].data<float>()[0], scale);
  const double zp = r["zp"].data<uint8_t>()[0];
  EXPECT_EQ(zp, std::nearbyint(3.0f / scale));
  for (size_t i = 0; i < x.size(); ++i) {
    const double q =
        std::isnan(x[i]) ? 0 : std::clamp(std::nearbyint(x[i] / scale) + zp, 0.0, 255.0);
    ASSERT_EQ(r["y"].data<uint8_t>()[i], q) << "x[" << i << "] = " << x[i];
  }
}

TEST(QLinearMatMul, RescalesTheIntegerProduct) {
  // (2 - 0) * (1 - 1) + (4 - 0) * (3 - 1) = 8; 8 * 0.5 * 1 / 2 = 2; + 10.
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (uint8[1,2] a, float as, uint8 az, uint8[2,1] b, float bs, uint8 bz, float ys, uint8 yz) => (uint8[1,1] z) {
  z = QLinearMatMul(a, as, az, b, bs, bz, ys, yz)
})",
                  {{"a", tensor<uint8_t>({1, 2}, {2, 4})},
                   {"as", Tensor::scalar<float>(0.5f)},
                   {"az", Tensor::scalar<uint8_t>(0)},
                   {"b", tensor<uint8_t>({2, 1}, {1, 3})},
                   {"bs", Tensor::scalar<float>(1)},
                   {"bz", Tensor::scalar<uint8_t>(1)},
                   {"ys", Tensor::scalar<float>(2)},
                   {"yz", Tensor::scalar<uint8_t>(10)}});
  EXPECT_EQ(values(z), (std::vector<double>{12}));
}

TEST(ConvInteger, SubtractsZeroPoints) {
  std::vector<uint8_t> x{1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (uint8[1,1,3,3] x, uint8[1,1,2,2] w, uint8 xz) => (int32[1,1,2,2] z) { z = ConvInteger(x, w, xz) })",
                  {{"x", tensor<uint8_t>({1, 1, 3, 3}, x)},
                   {"w", tensor<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1})},
                   {"xz", Tensor::scalar<uint8_t>(1)}});
  ASSERT_EQ(z.dtype(), DType::kInt32);
  EXPECT_EQ(values(z), (std::vector<double>{8, 12, 20, 24}));
  auto q = run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (uint8[1,1,3,3] x, float xs, uint8 xz, uint8[1,1,2,2] w, float ws, uint8 wz, float ys, uint8 yz, int32[1] b)
  => (uint8[1,1,2,2] z) { z = QLinearConv(x, xs, xz, w, ws, wz, ys, yz, b) })",
                  {{"x", tensor<uint8_t>({1, 1, 3, 3}, x)},
                   {"xs", Tensor::scalar<float>(1)},
                   {"xz", Tensor::scalar<uint8_t>(1)},
                   {"w", tensor<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1})},
                   {"ws", Tensor::scalar<float>(0.5f)},
                   {"wz", Tensor::scalar<uint8_t>(0)},
                   {"ys", Tensor::scalar<float>(1)},
                   {"yz", Tensor::scalar<uint8_t>(0)},
                   {"b", tensor<int32_t>({1}, {2})}});
  // (sum + 2) * 0.5.
  EXPECT_EQ(values(q), (std::vector<double>{5, 7, 11, 13}));
}

// QLinearConv's requantization of a whole plane (the vector path takes eight sums at a time, the
// scalar one the rest): every x in 0..255 times 0.5 gives every tie k + 0.5 (to even), and the
// bias pushes the plane past both ends of uint8 and int8 (saturation).
TEST(QLinearConv, RequantizesTiesToEvenAndSaturatesOnLongPlanes) {
  std::vector<uint8_t> x(257);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i % 256);
  for (const bool is_signed : {false, true})
    for (const int32_t bias : {-300, -7, 0, 301}) {
      const std::string y_type = is_signed ? "int8" : "uint8";
      const Tensor yz = is_signed ? Tensor::scalar<int8_t>(-3) : Tensor::scalar<uint8_t>(3);
      auto q = run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (uint8[1,1,1,257] x, float xs, uint8 xz, uint8[1,1,1,1] w, float ws, uint8 wz, float ys, )" +
                          y_type + " yz, int32[1] b) => (" + y_type +
                          R"([1,1,1,257] z) { z = QLinearConv(x, xs, xz, w, ws, wz, ys, yz, b) })",
                      {{"x", tensor<uint8_t>({1, 1, 1, 257}, x)},
                       {"xs", Tensor::scalar<float>(1)},
                       {"xz", Tensor::scalar<uint8_t>(0)},
                       {"w", tensor<uint8_t>({1, 1, 1, 1}, {1})},
                       {"ws", Tensor::scalar<float>(0.5f)},
                       {"wz", Tensor::scalar<uint8_t>(0)},
                       {"ys", Tensor::scalar<float>(1)},
                       {"yz", yz},
                       {"b", tensor<int32_t>({1}, {bias})}});
      const std::vector<double> got = values(q);
      ASSERT_EQ(got.size(), x.size());
      const double lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255, zero = is_signed ? -3 : 3;
      for (size_t i = 0; i < x.size(); ++i) {
        const double expect = std::clamp(std::nearbyint((x[i] + bias) * 0.5) + zero, lo, hi);
        ASSERT_EQ(got[i], expect) << y_type << " bias " << bias << " at " << i;
      }
    }
}

TEST(QuantizeLinear, BlockedAndSixteenBit) {
  // Blocks of 2 along axis 1, one scale per block: x / scale = 0 2 | 2 3 and 2 2.5 | 1.5 1.75,
  // rounded half to even.
  auto b =
      run_op(R"(<ir_version: 8, opset_import: ["" : 21]>
g (float[2,4] x, float[2,2] s) => (uint8[2,4] z) { z = QuantizeLinear <axis = 1, block_size = 2> (x, s) })",
             {{"x", f32({2, 4}, {0, 2, 4, 6, 8, 10, 12, 14})}, {"s", f32({2, 2}, {1, 2, 4, 8})}});
  ASSERT_EQ(b.dtype(), DType::kUint8);
  EXPECT_EQ(values(b), (std::vector<double>{0, 2, 2, 3, 2, 2, 2, 2}));
  // One block covers the whole axis, whatever block_size's size (no overflow rounding it up).
  auto whole =
      run_op(R"(<ir_version: 8, opset_import: ["" : 21]>
g (float[2,4] x, float[2,1] s) => (uint8[2,4] z) { z = QuantizeLinear <axis = 1, block_size = 9223372036854775807> (x, s) })",
             {{"x", f32({2, 4}, {0, 2, 4, 6, 8, 10, 12, 14})}, {"s", f32({2, 1}, {1, 2})}});
  EXPECT_EQ(values(whole), (std::vector<double>{0, 2, 4, 6, 4, 5, 6, 7}));
  auto i16 = run_op(R"(<ir_version: 8, opset_import: ["" : 21]>
g (float[3] x, float s, int16 zp) => (int16[3] z) { z = QuantizeLinear(x, s, zp) })",
                    {{"x", f32({3}, {-70000, 1.5f, 70000})},
                     {"s", Tensor::scalar<float>(1)},
                     {"zp", Tensor::scalar<int16_t>(0)}});
  ASSERT_EQ(i16.dtype(), DType::kInt16);
  EXPECT_EQ(values(i16), (std::vector<double>{-32768, 2, 32767}));
  auto u16 = run_op(R"(<ir_version: 8, opset_import: ["" : 21]>
g (float[3] x, float s, uint16 zp) => (uint16[3] z) { z = QuantizeLinear(x, s, zp) })",
                    {{"x", f32({3}, {-1, 3.5f, 1e6f})},
                     {"s", Tensor::scalar<float>(1)},
                     {"zp", Tensor::scalar<uint16_t>(0)}});
  EXPECT_EQ(values(u16), (std::vector<double>{0, 4, 65535}));
  auto err = run_op_error(
      R"(<ir_version: 8, opset_import: ["" : 21]>
g (float[2,4] x, float[2,3] s) => (uint8[2,4] z) { z = QuantizeLinear <axis = 1, block_size = 2> (x, s) })",
      {{"x", f32({2, 4}, {0, 2, 4, 6, 8, 10, 12, 14})}, {"s", f32({2, 3}, {1, 1, 1, 1, 1, 1})}});
  EXPECT_NE(err.find("y_scale must have shape 2x2, got 2x3"), std::string::npos) << err;
}

TEST(DequantizeLinear, BlockedAndSixteenBit) {
  // (x - zp) * scale with scale and zero point per block of 2 along axis 1.
  auto b = run_op(R"(<ir_version: 8, opset_import: ["" : 21]>
g (int8[2,4] x, float[2,2] s, int8[2,2] zp) => (float[2,4] z) { z = DequantizeLinear <axis = 1, block_size = 2> (x, s, zp) })",
                  {{"x", tensor<int8_t>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})},
                   {"s", f32({2, 2}, {1, 2, 3, 4})},
                   {"zp", tensor<int8_t>({2, 2}, {0, 1, 0, 1})}});
  expect_tensor_near(b, {2, 4}, {1, 2, 4, 6, 15, 18, 24, 28});
  auto u16 = run_op(R"(<ir_version: 8, opset_import: ["" : 21]>
g (uint16[2] x, float s, uint16 zp) => (float[2] z) { z = DequantizeLinear(x, s, zp) })",
                    {{"x", tensor<uint16_t>({2}, {0, 65535})},
                     {"s", Tensor::scalar<float>(0.5f)},
                     {"zp", Tensor::scalar<uint16_t>(1)}});
  expect_tensor_near(u16, {2}, {-0.5, 32767});
}

// int4/uint4 (21) and int2/uint2 (25) round half to even and clamp to the type's range, as the
// 8-bit types do; they never wrap around as Cast does.
TEST(QuantizeLinear, NarrowIntegersClamp) {
  auto i4 = run_op(R"(<ir_version: 10, opset_import: ["" : 21]>
g (float[6] x, float s, int4 zp) => (int4[6] z) { z = QuantizeLinear(x, s, zp) })",
                   {{"x", f32({6}, {-40, -17, 5, 7, 9, 40})},
                    {"s", Tensor::scalar<float>(2)},
                    {"zp", narrow(DType::kInt4, {}, {1})}});
  ASSERT_EQ(i4.dtype(), DType::kInt4);
  // x / 2 = -20, -8.5, 2.5, 3.5, 4.5, 20 -> -20, -8, 2, 4, 4, 20; + 1; clamped to [-8, 7].
  EXPECT_EQ(values(i4), (std::vector<double>{-8, -7, 3, 5, 5, 7}));
  auto u4 = run_op(R"(<ir_version: 10, opset_import: ["" : 21]>
g (float[3] x, float s) => (uint4[3] z) { z = QuantizeLinear <output_dtype = 21> (x, s) })",
                   {{"x", f32({3}, {-3, 14.5f, 100})}, {"s", Tensor::scalar<float>(1)}});
  ASSERT_EQ(u4.dtype(), DType::kUint4);
  EXPECT_EQ(values(u4), (std::vector<double>{0, 14, 15}));
  auto i2 = run_op(R"(<ir_version: 11, opset_import: ["" : 25]>
g (float[5] x, float s, int2 zp) => (int2[5] z) { z = QuantizeLinear(x, s, zp) })",
                   {{"x", f32({5}, {-5, -0.5f, 0.5f, 1.5f, 5})},
                    {"s", Tensor::scalar<float>(1)},
                    {"zp", narrow(DType::kInt2, {}, {0})}});
  EXPECT_EQ(values(i2), (std::vector<double>{-2, 0, 0, 1, 1}));
  // int2 is not a type of QuantizeLinear-24.
  auto err = run_op_error(R"(<ir_version: 10, opset_import: ["" : 24]>
g (float[1] x, float s, int2 zp) => (int2[1] z) { z = QuantizeLinear(x, s, zp) })",
                          {{"x", f32({1}, {1})},
                           {"s", Tensor::scalar<float>(1)},
                           {"zp", narrow(DType::kInt2, {}, {0})}});
  EXPECT_NE(err.find("QuantizeLinear-24 outputs"), std::string::npos) << err;
}

// Float8 outputs (19 on): x / scale rounded to nearest even, out of range by `saturate`.
TEST(QuantizeLinear, Float8SaturateOrNot) {
  const auto x = f32({4}, {1000, -1000, 0.3f, -0.0f});
  const std::map<std::string, Tensor> in = {
      {"x", x}, {"s", Tensor::scalar<float>(2)}, {"zp", narrow(DType::kFloat8E4M3FN, {}, {0})}};
  auto sat = run_op(R"(<ir_version: 9, opset_import: ["" : 19]>
g (float[4] x, float s, float8e4m3fn zp) => (float8e4m3fn[4] z) { z = QuantizeLinear(x, s, zp) })",
                    in);
  ASSERT_EQ(sat.dtype(), DType::kFloat8E4M3FN);
  // 0.15 lies between 0.140625 and 0.15625: the nearer is 0.15625.
  EXPECT_EQ(values(sat), (std::vector<double>{448, -448, 0.15625, 0}));
  EXPECT_TRUE(std::signbit(values(sat)[3]));
  auto raw = values(run_op(R"(<ir_version: 9, opset_import: ["" : 19]>
g (float[4] x, float s, float8e4m3fn zp) => (float8e4m3fn[4] z) { z = QuantizeLinear <saturate = 0> (x, s, zp) })",
                           in));
  EXPECT_TRUE(std::isnan(raw[0]) && std::isnan(raw[1]));
  EXPECT_EQ(raw[2], 0.15625);
}

// Blocked int4 (21): each block of 2 along axis 1 has its scale and zero point.
TEST(DequantizeLinear, BlockedInt4) {
  auto z = run_op(R"(<ir_version: 10, opset_import: ["" : 21]>
g (int4[2,4] x, float[2,2] s, int4[2,2] zp) => (float[2,4] z) { z = DequantizeLinear <axis = 1, block_size = 2> (x, s, zp) })",
                  {{"x", narrow(DType::kInt4, {2, 4}, {-8, 7, 1, 2, 3, -4, 5, 6})},
                   {"s", f32({2, 2}, {1, 0.5f, 2, 4})},
                   {"zp", narrow(DType::kInt4, {2, 2}, {0, -1, 1, 7})}});
  ASSERT_EQ(z.dtype(), DType::kFloat);
  expect_tensor_near(z, {2, 4}, {-8, 7, 1, 1.5, 4, -10, -8, -4}, 0, 0);
  auto u4 = run_op(R"(<ir_version: 10, opset_import: ["" : 21]>
g (uint4[3] x, float16 s) => (float16[3] z) { z = DequantizeLinear(x, s) })",
                   {{"x", narrow(DType::kUint4, {3}, {0, 7, 15})}, {"s", f16({}, {0.5f})}});
  ASSERT_EQ(u4.dtype(), DType::kFloat16);
  EXPECT_EQ(values(u4), (std::vector<double>{0, 3.5, 7.5}));
  // The shape of a blocked scale is checked.
  auto err = run_op_error(R"(<ir_version: 10, opset_import: ["" : 21]>
g (int4[2,4] x, float[2,3] s) => (float[2,4] z) { z = DequantizeLinear <axis = 1, block_size = 2> (x, s) })",
                          {{"x", narrow(DType::kInt4, {2, 4}, {0, 0, 0, 0, 0, 0, 0, 0})},
                           {"s", f32({2, 3}, {1, 1, 1, 1, 1, 1})}});
  EXPECT_NE(err.find("x_scale must have shape 2x2, got 2x3"), std::string::npos) << err;
}

// Float8 (19) and float4e2m1 (23) x: the value times the scale.
TEST(DequantizeLinear, NarrowFloats) {
  Tensor x = narrow(DType::kFloat8E5M2, {3}, {57344, -0.5, 0});
  x.raw()[2] = std::byte{0x7C};  // +infinity (a cast would saturate it)
  auto f8 = run_op(R"(<ir_version: 9, opset_import: ["" : 19]>
g (float8e5m2[3] x, float s) => (float[3] z) { z = DequantizeLinear(x, s) })",
                   {{"x", x}, {"s", Tensor::scalar<float>(2)}});
  EXPECT_EQ(values(f8), (std::vector<double>{114688, -1, INFINITY}));
  auto f4 = run_op(
      R"(<ir_version: 10, opset_import: ["" : 23]>
g (float4e2m1[3] x, float s) => (float16[3] z) { z = DequantizeLinear <output_dtype = 10> (x, s) })",
      {{"x", narrow(DType::kFloat4E2M1, {3}, {6, -1.5, 0.5})}, {"s", Tensor::scalar<float>(3)}});
  ASSERT_EQ(f4.dtype(), DType::kFloat16);
  EXPECT_EQ(values(f4), (std::vector<double>{18, -4.5, 1.5}));
}

}  // namespace
}  // namespace onnxdbg::testing
