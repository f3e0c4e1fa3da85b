// Tests of Cast, CastLike and BitCast: numeric conversions, float16/bfloat16, bool, strings,
// Cast-1's string-valued 'to' attribute, and BitCast's reinterpreted bits.
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
}

}  // namespace
}  // namespace onnxdbg::testing
