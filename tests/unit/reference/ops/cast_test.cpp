// Tests of Cast, CastLike and BitCast: numeric conversions, float16/bfloat16, bool, strings,
// Cast-1's string-valued 'to' attribute, the narrow types with Cast-19's saturate and Cast-24's
// round_mode, and BitCast's reinterpreted bits.
#include <cmath>

#include "op_test_util.h"

namespace onnxdbg::testing {
namespace {

Tensor cast(const std::string& from, const std::string& to, int to_code, Tensor x, int opset = 13) {
  return run_op("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
                    "]>\n"
                    "g (" +
                    from + "[4] x) => (" + to +
                    "[4] z) { z = Cast <to = " + std::to_string(to_code) + "> (x) }",
                {{"x", std::move(x)}});
}

TEST(CastOps, FloatToIntegerTruncatesTowardZero) {
  auto z = cast("float", "int32", 6, f32({4}, {1.9f, -1.9f, 0.5f, -0.0f}));
  ASSERT_EQ(z.dtype(), DType::kInt32);
  EXPECT_EQ(values(z), (std::vector<double>{1, -1, 0, 0}));
}

TEST(CastOps, ToAndFromHalfTypes) {
  auto h = cast("float", "float16", 10, f32({4}, {1.0f, 0.1f, 65504.0f, 1e6f}));
  ASSERT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(h.data<Float16>()[1].bits, Float16(0.1f).bits);
  EXPECT_TRUE(std::isinf(static_cast<float>(h.data<Float16>()[3])));
  auto back = cast("float16", "double", 11, h);
  ASSERT_EQ(back.dtype(), DType::kDouble);
  EXPECT_EQ(back.data<double>()[1], static_cast<double>(static_cast<float>(Float16(0.1f))));
  auto bf = cast("float", "bfloat16", 16, f32({4}, {1.0f, 3.14159f, -2.0f, 0.0f}));
  ASSERT_EQ(bf.dtype(), DType::kBFloat16);
  expect_tensor_near(bf, {4}, {1, 3.140625, -2, 0}, 0, 0);
}

TEST(CastOps, BoolConversions) {
  auto b = cast("float", "bool", 9, f32({4}, {0.0f, -2.0f, 0.1f, NAN}));
  EXPECT_EQ(values(b), (std::vector<double>{0, 1, 1, 1}));
  auto i = cast("bool", "int64", 7, tensor<bool>({4}, {true, false, true, true}));
  EXPECT_EQ(values(i), (std::vector<double>{1, 0, 1, 1}));
}

TEST(CastOps, Strings) {
  auto s = cast("float", "string", 8, f32({4}, {0.1f, -2.0f, NAN, 1e20f}));
  EXPECT_EQ(s.strings(), (std::vector<std::string>{"0.1", "-2", "nan", "1e+20"}));
  auto i = cast("int64", "string", 8, tensor<int64_t>({4}, {-7, 0, 123456789012345, 1}));
  EXPECT_EQ(i.strings(), (std::vector<std::string>{"-7", "0", "123456789012345", "1"}));
  auto f = cast("string", "float", 1, tensor<std::string>({4}, {"0.5", "-1e3", "inf", "NaN"}));
  auto fv = values(f);  // expect_tensor_near cannot compare infinities
  EXPECT_EQ(fv[0], 0.5);
  EXPECT_EQ(fv[1], -1000);
  EXPECT_EQ(fv[2], INFINITY);
  EXPECT_TRUE(std::isnan(fv[3]));
}

TEST(CastOps, UnparsableStringIsAnError) {
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (string[1] x) => (float[1] z) { z = Cast <to = 1> (x) })",
                          {{"x", tensor<std::string>({1}, {"abc"})}});
  EXPECT_NE(err.find("cannot cast string 'abc'"), std::string::npos) << err;
}

TEST(CastOps, Cast1TakesATypeName) {
  auto z = run_op(R"(<ir_version: 3, opset_import: ["" : 1]>
    g (float[2] x) => (int64[2] z) { z = Cast <to = "INT64"> (x) })",
                  {{"x", f32({2}, {2.7f, -3.2f})}});
  ASSERT_EQ(z.dtype(), DType::kInt64);
  EXPECT_EQ(values(z), (std::vector<double>{2, -3}));
  auto err = run_op_error(R"(<ir_version: 3, opset_import: ["" : 1]>
    g (float[2] x) => (int64[2] z) { z = Cast <to = "INTEGER"> (x) })",
                          {{"x", f32({2}, {2.7f, -3.2f})}});
  EXPECT_NE(err.find("names no element type"), std::string::npos) << err;
}

TEST(CastOps, CastLikeTakesTheSecondInputsType) {
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 15]>
    g (float[3] x, float16[1] like) => (float16[3] z) { z = CastLike(x, like) })",
                  {{"x", f32({3}, {1.0f, 0.5f, 3.0f})}, {"like", f16({1}, {0})}});
  ASSERT_EQ(z.dtype(), DType::kFloat16);
  expect_tensor_near(z, {3}, {1, 0.5, 3}, 0, 0);
  auto u = run_op(R"(<ir_version: 8, opset_import: ["" : 15]>
    g (double[2] x, uint8[1] like) => (uint8[2] z) { z = CastLike(x, like) })",
                  {{"x", tensor<double>({2}, {200.9, 3.1})}, {"like", tensor<uint8_t>({1}, {0})}});
  EXPECT_EQ(values(u), (std::vector<double>{200, 3}));
}

// Cast-19 on: float8 targets saturate to the largest finite value by default; with saturate = 0
// out-of-range values and infinities become NaN (E4M3FN) or infinities (E5M2), per the spec's
// tables.
TEST(CastOps, Float8SaturateOrNot) {
  const auto x = f32({4}, {1000.0f, -1000.0f, INFINITY, 0.5f});
  auto sat = cast("float", "float8e4m3fn", 17, x, 19);
  ASSERT_EQ(sat.dtype(), DType::kFloat8E4M3FN);
  EXPECT_EQ(values(sat), (std::vector<double>{448, -448, 448, 0.5}));
  const std::string no_sat = R"(<ir_version: 9, opset_import: ["" : 19]>
g (float[4] x) => (float8e4m3fn[4] z) { z = Cast <to = 17, saturate = 0> (x) })";
  auto nan = values(run_op(no_sat, {{"x", x}}));
  EXPECT_TRUE(std::isnan(nan[0]) && std::isnan(nan[1]) && std::isnan(nan[2]));
  EXPECT_EQ(nan[3], 0.5);
  auto inf = values(run_op(R"(<ir_version: 9, opset_import: ["" : 19]>
g (float[4] x) => (float8e5m2[4] z) { z = Cast <to = 19, saturate = 0> (x) })",
                           {{"x", f32({4}, {1e6f, -1e6f, -INFINITY, 3.0f})}}));
  EXPECT_EQ(inf, (std::vector<double>{INFINITY, -INFINITY, -INFINITY, 3}));
  // CastLike-19 takes saturate too.
  auto like = values(run_op(R"(<ir_version: 9, opset_import: ["" : 19]>
g (float[4] x, float8e5m2[4] t) => (float8e5m2[4] z) { z = CastLike <saturate = 0> (x, t) })",
                            {{"x", f32({4}, {1e6f, -1e6f, 57344.0f, 3.0f})},
                             {"t", cast("float", "float8e5m2", 19, f32({4}, {0, 0, 0, 0}), 19)}}));
  EXPECT_EQ(like, (std::vector<double>{INFINITY, -INFINITY, 57344, 3}));
}

// Cast-24's round_mode for float8e8m0 targets: "up" (default) to the next power of two unless
// exact, "down" truncates, "nearest" rounds up from half way.
TEST(CastOps, Float8E8M0RoundMode) {
  const auto x = f32({4}, {1.1f, 3.0f, 0.75f, 4.0f});
  auto mode = [&](const std::string& attr) {
    return values(run_op(R"(<ir_version: 10, opset_import: ["" : 24]>
g (float[4] x) => (float8e8m0[4] z) { z = Cast <to = 24)" +
                             attr + R"(> (x) })",
                         {{"x", x}}));
  };
  EXPECT_EQ(mode(""), (std::vector<double>{2, 4, 1, 4}));
  EXPECT_EQ(mode(R"(, round_mode = "up")"), (std::vector<double>{2, 4, 1, 4}));
  EXPECT_EQ(mode(R"(, round_mode = "down")"), (std::vector<double>{1, 2, 0.5, 4}));
  EXPECT_EQ(mode(R"(, round_mode = "nearest")"), (std::vector<double>{1, 4, 1, 4}));
  auto err = run_op_error(R"(<ir_version: 10, opset_import: ["" : 24]>
g (float[4] x) => (float8e8m0[4] z) { z = Cast <to = 24, round_mode = "sideways"> (x) })",
                          {{"x", x}});
  EXPECT_NE(err.find("round_mode must be \"up\", \"down\" or \"nearest\", got \"sideways\""),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("(Cast)"), std::string::npos) << err;
}

// Narrow types to and from the others: int4 wraps as numpy with ml_dtypes does, float4 saturates,
// and a narrow float prints its value as a string.
TEST(CastOps, NarrowTypesRoundTrip) {
  auto i4 = cast("float", "int4", 22, f32({4}, {7.0f, 8.0f, -9.0f, 2.7f}), 21);
  ASSERT_EQ(i4.dtype(), DType::kInt4);
  EXPECT_EQ(values(i4), (std::vector<double>{7, -8, 7, 2}));
  auto i8 = cast("int4", "int8", 3, i4, 21);
  ASSERT_EQ(i8.dtype(), DType::kInt8);
  EXPECT_EQ(values(i8), (std::vector<double>{7, -8, 7, 2}));
  auto f4 = cast("float", "float4e2m1", 23, f32({4}, {100.0f, -0.3f, 1.25f, 2.5f}), 23);
  EXPECT_EQ(values(f4), (std::vector<double>{6, -0.5, 1, 2}));
  auto s = cast("float4e2m1", "string", 8, f4, 23);
  EXPECT_EQ(s.strings(), (std::vector<std::string>{"6", "-0.5", "1", "2"}));
  auto f8 =
      cast("string", "float8e4m3fn", 17, tensor<std::string>({4}, {"0.1", "-2", "nan", "1e9"}), 19);
  auto f8s = cast("float8e4m3fn", "string", 8, f8, 19);
  EXPECT_EQ(f8s.strings(), (std::vector<std::string>{"0.1015625", "-2", "nan", "448"}));
}

TEST(BitCast, KeepsTheBits) {
  auto i = run_op(R"(<ir_version: 8, opset_import: ["" : 26]>
    g (float[2] x) => (int32[2] z) { z = BitCast <to = 6> (x) })",
                  {{"x", f32({2}, {1.0f, -2.0f})}});
  ASSERT_EQ(i.dtype(), DType::kInt32);
  // 1.0f is 0x3F800000, -2.0f is 0xC0000000.
  EXPECT_EQ(values(i), (std::vector<double>{1065353216, -1073741824}));
  auto u = run_op(R"(<ir_version: 8, opset_import: ["" : 26]>
    g (int8[2] x) => (uint8[2] z) { z = BitCast <to = 2> (x) })",
                  {{"x", tensor<int8_t>({2}, {-1, 127})}});
  EXPECT_EQ(values(u), (std::vector<double>{255, 127}));
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 26]>
    g (float[2] x) => (int64[2] z) { z = BitCast <to = 7> (x) })",
                          {{"x", f32({2}, {1, 2})}});
  EXPECT_NE(err.find("cannot bit-cast float32 to int64: their bit widths differ"),
            std::string::npos)
      << err;
  // The narrow types: int4 and float4e2m1 share 4 bits (-1 is 0b1111, float4's -6); int4 and
  // int8, one byte each in memory, do not.
  Tensor i4 = Tensor::make(DType::kInt4, {2}).value();
  i4.set_from_double(0, -1);
  i4.set_from_double(1, 1);
  auto f4 = run_op(R"(<ir_version: 10, opset_import: ["" : 26]>
    g (int4[2] x) => (float4e2m1[2] z) { z = BitCast <to = 23> (x) })",
                   {{"x", i4}});
  ASSERT_EQ(f4.dtype(), DType::kFloat4E2M1);
  EXPECT_EQ(values(f4), (std::vector<double>{-6, 0.5}));
  auto narrow_err = run_op_error(R"(<ir_version: 10, opset_import: ["" : 26]>
    g (int4[2] x) => (int8[2] z) { z = BitCast <to = 3> (x) })",
                                 {{"x", i4}});
  EXPECT_NE(narrow_err.find("cannot bit-cast int4 to int8: their bit widths differ"),
            std::string::npos)
      << narrow_err;
}

}  // namespace
}  // namespace onnxdbg::testing
