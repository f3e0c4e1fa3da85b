// InterpreterOptions::accumulate: with Accumulate::kDouble, accumulating ops (MatMul, Gemm, Conv,
// ...) sum in float64 and round once, so a long dot product with cancellation that float32
// accumulation gets wrong comes out exact; both modes give the same bits run to run; ops that
// do not accumulate are untouched, and float16 inputs keep their type.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "reference/interpreter.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

using testing::same_bits;

using reference::Accumulate;
using testing::parse_text_model;

constexpr int kLen = 1024;

// "1e8, 1, 1, ..., 1, -1e8": its dot product with ones is kLen - 2 = 1022 exactly, but float32
// partial sums next to 1e8 (whose ulp is 8) drop the ones.
std::string cancelling_values() {
  std::string s = "1e8";
  for (int i = 1; i < kLen - 1; ++i) s += ", 1.0";
  return s + ", -1e8";
}

// MatMul, Gemm and a 1-D Conv over the same cancelling vector, each against x (all ones).
std::string dot_model(const std::string& type) {
  const std::string n = std::to_string(kLen);
  return "<ir_version: 8, opset_import: [\"\" : 13]>\n"
         "dot (" +
         type + "[" + n + ",1] x) => (" + type + "[1,1] mm, " + type + "[1,1] gm, " + type +
         "[1,1,1] cv, " + type + "[" + n +
         ",1] id) {\n"
         "  a = Constant <value = " +
         type + "[1," + n + "] {" + cancelling_values() +
         "}> ()\n"
         "  mm = MatMul (a, x)\n"
         "  xt = Transpose (x)\n"
         "  gm = Gemm <transB = 1> (a, xt)\n"
         "  s3 = Constant <value = int64[3] {1, 1, " +
         n +
         "}> ()\n"
         "  a3 = Reshape (a, s3)\n"
         "  x3 = Reshape (xt, s3)\n"
         "  cv = Conv (x3, a3)\n"
         "  id = Identity (x)\n"
         "}\n";
}

onnx::ModelProto float_dot_model() { return parse_text_model(dot_model("float")); }

Tensor ones(DType dtype) {
  Tensor t(DType::kFloat, {kLen, 1});
  for (int i = 0; i < kLen; ++i) t.data<float>()[i] = 1.0f;
  return dtype == DType::kFloat ? t : *cast_tensor(t, dtype);
}

std::map<std::string, Tensor> run(const onnx::ModelProto& model, Accumulate acc,
                                  const std::map<std::string, Tensor>& inputs) {
  reference::InterpreterOptions options;
  options.accumulate = acc;
  auto in = reference::Interpreter::create(model, {}, options);
  EXPECT_TRUE(in.has_value()) << in.status().to_string();
  if (!in) return {};
  auto out = (*in)->run(inputs);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  return out ? *out : std::map<std::string, Tensor>{};
}

Tensor f16(Shape shape, const std::vector<float>& v) {
  std::vector<Float16> h;
  for (float x : v) h.emplace_back(x);
  return Tensor::from_vector<Float16>(std::move(shape), h);
}

TEST(Accumulate, DoubleGetsTheCancellingDotProductExactlyAndFloatDoesNot) {
  const auto model = float_dot_model();
  const std::map<std::string, Tensor> inputs = {{"x", ones(DType::kFloat)}};
  const auto f = run(model, Accumulate::kFloat, inputs);
  const auto d = run(model, Accumulate::kDouble, inputs);
  for (const char* name : {"mm", "gm", "cv"}) {
    ASSERT_TRUE(f.count(name) && d.count(name)) << name;
    EXPECT_EQ(d.at(name).dtype(), DType::kFloat) << name;
    EXPECT_EQ(d.at(name).data<float>()[0], static_cast<float>(kLen - 2)) << name;
    EXPECT_NE(f.at(name).data<float>()[0], static_cast<float>(kLen - 2)) << name;
  }
  // Identity does not accumulate: the same values in both modes.
  EXPECT_TRUE(same_bits(f.at("id"), d.at("id")));
}

TEST(Accumulate, BothModesGiveTheSameBitsEveryRun) {
  const auto model = float_dot_model();
  const std::map<std::string, Tensor> inputs = {{"x", ones(DType::kFloat)}};
  for (Accumulate acc : {Accumulate::kFloat, Accumulate::kDouble}) {
    const auto first = run(model, acc, inputs);
    for (int i = 0; i < 3; ++i) {
      const auto again = run(model, acc, inputs);
      for (const auto& [name, t] : first)
        EXPECT_TRUE(same_bits(t, again.at(name))) << name << " in " << accumulate_name(acc);
    }
  }
}

TEST(Accumulate, HalfInputsKeepTheirTypeAndRoundOnce) {
  // a . x = 1 + 2^-11 + 2^-30, just above the midpoint of float16's 1 and 1 + 2^-10. Float32
  // drops the 2^-30 and float16 then rounds the midpoint to even (1); float64 keeps it, and one
  // rounding to float16 gives 1 + 2^-10. Rounding the float64 through float32 would give 1 too.
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "dot (float16[3,1] x, float16[1,3] a) => (float16[1,1] mm) {\n"
      "  mm = MatMul (a, x)\n"
      "}\n";
  const auto model = parse_text_model(text);
  const float e11 = std::ldexp(1.0f, -11), e15 = std::ldexp(1.0f, -15);
  const std::map<std::string, Tensor> inputs = {{"x", f16({3, 1}, {1, 1, e15})},
                                                {"a", f16({1, 3}, {1, e11, e15})}};
  const auto f = run(model, Accumulate::kFloat, inputs);
  const auto d = run(model, Accumulate::kDouble, inputs);
  ASSERT_TRUE(f.count("mm") && d.count("mm"));
  EXPECT_EQ(f.at("mm").dtype(), DType::kFloat16);
  EXPECT_EQ(d.at("mm").dtype(), DType::kFloat16);
  EXPECT_EQ(f.at("mm").get_as_double(0), 1.0);
  EXPECT_EQ(d.at("mm").get_as_double(0), 1.0 + std::ldexp(1.0, -10));
}

TEST(Accumulate, NamesParseBothWays) {
  EXPECT_EQ(*reference::parse_accumulate("float"), Accumulate::kFloat);
  EXPECT_EQ(*reference::parse_accumulate("double"), Accumulate::kDouble);
  EXPECT_STREQ(reference::accumulate_name(Accumulate::kDouble), "double");
  auto bad = reference::parse_accumulate("half");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("is not one of float, double"), std::string::npos);
}

}  // namespace
}  // namespace onnxdbg
