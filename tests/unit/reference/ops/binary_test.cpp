// Tests of the binary and variadic elementwise kernels: arithmetic, Pow, Mod, BitShift,
// Bitwise*, comparisons (Equal on strings), logic, Where, Max/Min/Sum/Mean; numpy and legacy
// (opset < 7) broadcasting.
#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace onnxdbg::testing {
namespace {

// z = op(a, b) at `opset` with the given declared types and shapes, e.g. "float[2,3]".
Tensor bin(const std::string& op, const std::string& ta, const std::string& tb,
           const std::string& tz, Tensor a, Tensor b, int opset = 14) {
  return run_op("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
                    "]>\n"
                    "g (" +
                    ta + " a, " + tb + " b) => (" + tz + " z) { z = " + op + "(a, b) }",
                {{"a", std::move(a)}, {"b", std::move(b)}});
}

TEST(BinaryOps, ArithmeticBroadcastsRowVector) {
  auto a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto b = f32({3}, {10, 20, 30});
  expect_tensor_near(bin("Add", "float[2,3]", "float[3]", "float[2,3]", a, b), {2, 3},
                     {11, 22, 33, 14, 25, 36});
  expect_tensor_near(bin("Sub", "float[2,3]", "float[3]", "float[2,3]", a, b), {2, 3},
                     {-9, -18, -27, -6, -15, -24});
  expect_tensor_near(bin("Mul", "float[2,3]", "float[3]", "float[2,3]", a, b), {2, 3},
                     {10, 40, 90, 40, 100, 180});
  expect_tensor_near(bin("Div", "float[2,3]", "float[3]", "float[2,3]", a, b), {2, 3},
                     {0.1, 0.1, 0.1, 0.4, 0.25, 0.2});
}

TEST(BinaryOps, BroadcastsBothWays) {
  auto z = bin("Add", "float[2,1]", "float[1,3]", "float[2,3]", f32({2, 1}, {1, 2}),
               f32({1, 3}, {10, 20, 30}));
  expect_tensor_near(z, {2, 3}, {11, 21, 31, 12, 22, 32});
}

TEST(BinaryOps, IntegerArithmeticWrapsAndDivTruncates) {
  const int32_t mx = std::numeric_limits<int32_t>::max();
  auto add = bin("Add", "int32[2]", "int32[2]", "int32[2]", tensor<int32_t>({2}, {mx, -5}),
                 tensor<int32_t>({2}, {1, 3}));
  EXPECT_EQ(values(add), (std::vector<double>{std::numeric_limits<int32_t>::min(), -2}));
  auto div = bin("Div", "int64[4]", "int64[4]", "int64[4]", tensor<int64_t>({4}, {7, -7, 7, -7}),
                 tensor<int64_t>({4}, {2, 2, -2, -2}));
  EXPECT_EQ(values(div), (std::vector<double>{3, -3, -3, 3}));
  auto u8 = bin("Mul", "uint8[2]", "uint8[2]", "uint8[2]", tensor<uint8_t>({2}, {16, 3}),
                tensor<uint8_t>({2}, {17, 4}));
  EXPECT_EQ(values(u8), (std::vector<double>{16, 12}));  // 272 wraps to 16
}

TEST(BinaryOps, IntegerDivisionByZeroIsAModelError) {
  auto err =
      run_op_error(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (int32[2] a, int32[2] b) => (int32[2] z) { z = Div(a, b) })",
                   {{"a", tensor<int32_t>({2}, {1, 2})}, {"b", tensor<int32_t>({2}, {1, 0})}});
  EXPECT_NE(err.find("integer division by zero"), std::string::npos) << err;
}

TEST(BinaryOps, ShapesThatDoNotBroadcastGiveAClearError) {
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[2,3] a, float[2] b) => (float[2,3] z) { z = Add(a, b) })",
                          {{"a", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", f32({2}, {1, 2})}});
  EXPECT_NE(err.find("shapes 2x3, 2 cannot be broadcast together"), std::string::npos) << err;
  EXPECT_NE(err.find("(Add)"), std::string::npos) << err;
}

TEST(BinaryOps, MixedElementTypesAreAModelError) {
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[2] a, int32[2] b) => (float[2] z) { z = Mul(a, b) })",
                          {{"a", f32({2}, {1, 2})}, {"b", tensor<int32_t>({2}, {1, 2})}});
  EXPECT_NE(err.find("different element types: float32 and int32"), std::string::npos) << err;
}

TEST(BinaryOps, LegacyBroadcastWithAxis) {
  // Opset 6: B of shape [2] is aligned with dim 0 of A by axis=0 (numpy rules would refuse).
  auto z = run_op(R"(<ir_version: 3, opset_import: ["" : 6]>
    g (float[2,3] a, float[2] b) => (float[2,3] z) { z = Add <broadcast = 1, axis = 0> (a, b) })",
                  {{"a", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", f32({2}, {100, 200})}});
  expect_tensor_near(z, {2, 3}, {101, 102, 103, 204, 205, 206});
  // Default axis: trailing dims.
  auto t = run_op(R"(<ir_version: 3, opset_import: ["" : 6]>
    g (float[2,3] a, float[3] b) => (float[2,3] z) { z = Sub <broadcast = 1> (a, b) })",
                  {{"a", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", f32({3}, {1, 1, 1})}});
  expect_tensor_near(t, {2, 3}, {0, 1, 2, 3, 4, 5});
  auto err = run_op_error(R"(<ir_version: 3, opset_import: ["" : 6]>
    g (float[2,3] a, float[3] b) => (float[2,3] z) { z = Add(a, b) })",
                          {{"a", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", f32({3}, {1, 1, 1})}});
  EXPECT_NE(err.find("broadcast is 0"), std::string::npos) << err;
}

TEST(BinaryOps, PowWithMixedTypes) {
  expect_tensor_near(
      bin("Pow", "float[3]", "float[3]", "float[3]", f32({3}, {2, 4, 9}), f32({3}, {3, 0.5f, -1})),
      {3}, {8, 2, 1.0 / 9});
  auto i = bin("Pow", "int32[3]", "float[3]", "int32[3]", tensor<int32_t>({3}, {2, 4, 9}),
               f32({3}, {3, 0.5f, 2}), 15);
  ASSERT_EQ(i.dtype(), DType::kInt32);
  EXPECT_EQ(values(i), (std::vector<double>{8, 2, 81}));
  auto f = bin("Pow", "float[3]", "int64[3]", "float[3]", f32({3}, {2, -3, 0.5f}),
               tensor<int64_t>({3}, {10, 3, 2}), 15);
  expect_tensor_near(f, {3}, {1024, -27, 0.25});
  auto ii = bin("Pow", "int64[3]", "int64[3]", "int64[3]", tensor<int64_t>({3}, {3, -2, 5}),
                tensor<int64_t>({3}, {4, 3, -1}), 15);
  EXPECT_EQ(values(ii), (std::vector<double>{81, -8, 0}));
}

TEST(BinaryOps, PowFloat16BaseKeepsItsType) {
  auto z =
      bin("Pow", "float16[2]", "float[2]", "float16[2]", f16({2}, {3, 0.5f}), f32({2}, {2, 2}), 15);
  ASSERT_EQ(z.dtype(), DType::kFloat16);
  expect_tensor_near(z, {2}, {9, 0.25});
  // float32 base with a float16 exponent stays float32.
  auto w =
      bin("Pow", "float[2]", "float16[2]", "float[2]", f32({2}, {3, 0.5f}), f16({2}, {2, 2}), 15);
  ASSERT_EQ(w.dtype(), DType::kFloat);
}

TEST(BinaryOps, ModIntegerAndFmod) {
  auto m = run_op(
      R"(<ir_version: 8, opset_import: ["" : 13]>
    g (int32[4] a, int32[4] b) => (int32[4] z) { z = Mod(a, b) })",
      {{"a", tensor<int32_t>({4}, {-4, 7, 5, -3})}, {"b", tensor<int32_t>({4}, {3, -3, -2, 2})}});
  EXPECT_EQ(values(m), (std::vector<double>{2, -2, -1, 1}));  // sign of the divisor
  auto f = run_op(
      R"(<ir_version: 8, opset_import: ["" : 13]>
    g (int32[4] a, int32[4] b) => (int32[4] z) { z = Mod <fmod = 1> (a, b) })",
      {{"a", tensor<int32_t>({4}, {-4, 7, 5, -3})}, {"b", tensor<int32_t>({4}, {3, -3, -2, 2})}});
  EXPECT_EQ(values(f), (std::vector<double>{-1, 1, 1, -1}));  // sign of the dividend
  auto fl = run_op(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2] a, float[1] b) => (float[2] z) { z = Mod <fmod = 1> (a, b) })",
                   {{"a", f32({2}, {-4.5f, 5.5f})}, {"b", f32({1}, {2})}});
  expect_tensor_near(fl, {2}, {-0.5, 1.5});
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2] a, float[1] b) => (float[2] z) { z = Mod(a, b) })",
                          {{"a", f32({2}, {-4.5f, 5.5f})}, {"b", f32({1}, {2})}});
  EXPECT_NE(err.find("fmod=1"), std::string::npos) << err;
}

TEST(BinaryOps, BitShift) {
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 11]>
    g (uint8[3] a, uint8[3] b) => (uint8[3] l, uint8[3] r) {
      l = BitShift <direction = "LEFT"> (a, b)
      r = BitShift <direction = "RIGHT"> (a, b)
    })";
  auto outs = run_reference(parse_text_model(m), {{"a", tensor<uint8_t>({3}, {16, 4, 255})},
                                                  {"b", tensor<uint8_t>({3}, {1, 2, 9})}});
  EXPECT_EQ(values(outs["l"]), (std::vector<double>{32, 16, 0}));
  EXPECT_EQ(values(outs["r"]), (std::vector<double>{8, 1, 0}));
}

TEST(BinaryOps, Comparisons) {
  auto a = f32({4}, {1, 2, 3, NAN});
  auto b = f32({1}, {2});
  auto cmp = [&](const std::string& op) {
    return values(bin(op, "float[4]", "float[1]", "bool[4]", a, b, 16));
  };
  EXPECT_EQ(cmp("Equal"), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(cmp("Greater"), (std::vector<double>{0, 0, 1, 0}));
  EXPECT_EQ(cmp("Less"), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(cmp("GreaterOrEqual"), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(cmp("LessOrEqual"), (std::vector<double>{1, 1, 0, 0}));
  auto eqb = bin("Equal", "bool[2]", "bool[2]", "bool[2]", tensor<bool>({2}, {true, false}),
                 tensor<bool>({2}, {true, true}), 13);
  EXPECT_EQ(values(eqb), (std::vector<double>{1, 0}));
  auto h =
      bin("Less", "float16[2]", "float16[2]", "bool[2]", f16({2}, {1, 3}), f16({2}, {2, 2}), 13);
  ASSERT_EQ(h.dtype(), DType::kBool);
  EXPECT_EQ(values(h), (std::vector<double>{1, 0}));
}

TEST(BinaryOps, Logic) {
  auto a = tensor<bool>({2, 2}, {true, true, false, false});
  auto b = tensor<bool>({2}, {true, false});
  EXPECT_EQ(values(bin("And", "bool[2,2]", "bool[2]", "bool[2,2]", a, b, 7)),
            (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(bin("Or", "bool[2,2]", "bool[2]", "bool[2,2]", a, b, 7)),
            (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(values(bin("Xor", "bool[2,2]", "bool[2]", "bool[2,2]", a, b, 7)),
            (std::vector<double>{0, 1, 1, 0}));
}

TEST(BinaryOps, WhereBroadcastsThreeWays) {
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 16]>
    g (bool[2,1] c, float[3] x, float[1] y) => (float[2,3] z) { z = Where(c, x, y) })",
                  {{"c", tensor<bool>({2, 1}, {true, false})},
                   {"x", f32({3}, {1, 2, 3})},
                   {"y", f32({1}, {-1})}});
  expect_tensor_near(z, {2, 3}, {1, 2, 3, -1, -1, -1});
  auto s = run_op(R"(<ir_version: 8, opset_import: ["" : 16]>
    g (bool[2] c, string[2] x, string[2] y) => (string[2] z) { z = Where(c, x, y) })",
                  {{"c", tensor<bool>({2}, {false, true})},
                   {"x", tensor<std::string>({2}, {"a", "b"})},
                   {"y", tensor<std::string>({2}, {"c", "d"})}});
  EXPECT_EQ(s.strings(), (std::vector<std::string>{"c", "b"}));
}

TEST(BinaryOps, VariadicWithBroadcasting) {
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,2] a, float[2] b, float[1] c)
        => (float[2,2] mx, float[2,2] mn, float[2,2] s, float[2,2] avg, float[2,2] one) {
      mx = Max(a, b, c)
      mn = Min(a, b, c)
      s = Sum(a, b, c)
      avg = Mean(a, b, c)
      one = Max(a)
    })";
  auto outs = run_reference(
      parse_text_model(m),
      {{"a", f32({2, 2}, {1, 5, NAN, 0})}, {"b", f32({2}, {2, 3})}, {"c", f32({1}, {4})}});
  expect_tensor_near(outs["mx"], {2, 2}, {4, 5, NAN, 4});
  expect_tensor_near(outs["mn"], {2, 2}, {1, 3, NAN, 0});
  expect_tensor_near(outs["s"], {2, 2}, {7, 12, NAN, 7});
  expect_tensor_near(outs["avg"], {2, 2}, {7.0 / 3, 4, NAN, 7.0 / 3});
  expect_tensor_near(outs["one"], {2, 2}, {1, 5, NAN, 0});
}

TEST(BinaryOps, MaxOfIntegers) {
  auto z = bin("Max", "int64[3]", "int64[3]", "int64[3]", tensor<int64_t>({3}, {-5, 7, 0}),
               tensor<int64_t>({3}, {3, 2, 0}), 13);
  EXPECT_EQ(values(z), (std::vector<double>{3, 7, 0}));
}

TEST(BinaryOps, Float16Add) {
  auto z = bin("Add", "float16[2]", "float16[2]", "float16[2]", f16({2}, {1.5f, 2048}),
               f16({2}, {0.25f, 1}));
  ASSERT_EQ(z.dtype(), DType::kFloat16);
  expect_tensor_near(z, {2}, {1.75, 2048}, 0, 0);  // 2049 rounds to even in float16
}

TEST(BinaryOps, BitwiseAndOrXorNot) {
  const Tensor a = tensor<int32_t>({2}, {12, -1}), b = tensor<int32_t>({2}, {10, 5});
  EXPECT_EQ(values(bin("BitwiseAnd", "int32[2]", "int32[2]", "int32[2]", a, b, 18)),
            (std::vector<double>{8, 5}));
  EXPECT_EQ(values(bin("BitwiseOr", "int32[2]", "int32[2]", "int32[2]", a, b, 18)),
            (std::vector<double>{14, -1}));
  EXPECT_EQ(values(bin("BitwiseXor", "int32[2]", "int32[2]", "int32[2]", a, b, 18)),
            (std::vector<double>{6, -6}));
  // A [1] operand broadcasts over the [2, 2] one.
  auto masked = bin("BitwiseAnd", "uint8[2,2]", "uint8[1]", "uint8[2,2]",
                    tensor<uint8_t>({2, 2}, {1, 2, 0x33, 255}), tensor<uint8_t>({1}, {0x0F}), 18);
  ASSERT_EQ(masked.dtype(), DType::kUint8);
  EXPECT_EQ(values(masked), (std::vector<double>{1, 2, 3, 15}));
  auto n = run_op(R"(<ir_version: 8, opset_import: ["" : 18]>
    g (int16[3] x) => (int16[3] z) { z = BitwiseNot(x) })",
                  {{"x", tensor<int16_t>({3}, {0, -1, 5})}});
  EXPECT_EQ(values(n), (std::vector<double>{-1, 0, -6}));
  auto u = run_op(R"(<ir_version: 8, opset_import: ["" : 18]>
    g (uint8[2] x) => (uint8[2] z) { z = BitwiseNot(x) })",
                  {{"x", tensor<uint8_t>({2}, {0, 0x0F})}});
  EXPECT_EQ(values(u), (std::vector<double>{255, 240}));
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 18]>
    g (float[1] a, float[1] b) => (float[1] z) { z = BitwiseOr(a, b) })",
                          {{"a", f32({1}, {1})}, {"b", f32({1}, {2})}});
  EXPECT_NE(err.find("takes integer inputs, not float32"), std::string::npos) << err;
}

TEST(BinaryOps, EqualOnStringsFromOpset19) {
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 19]>
    g (string[3] a, string[1] b) => (bool[3] z) { z = Equal(a, b) })";
  auto z = run_op(
      m, {{"a", tensor<std::string>({3}, {"a", "b", ""})}, {"b", tensor<std::string>({1}, {"b"})}});
  ASSERT_EQ(z.dtype(), DType::kBool);
  EXPECT_EQ(values(z), (std::vector<double>{0, 1, 0}));
  auto err = run_op_error(
      R"(<ir_version: 8, opset_import: ["" : 19]>
    g (string[3] a, int64[1] b) => (bool[3] z) { z = Equal(a, b) })",
      {{"a", tensor<std::string>({3}, {"a", "b", ""})}, {"b", tensor<int64_t>({1}, {1})}});
  EXPECT_NE(err.find("different element types: string and int64"), std::string::npos) << err;
}

}  // namespace
}  // namespace onnxdbg::testing
