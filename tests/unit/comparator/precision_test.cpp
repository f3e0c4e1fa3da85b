// precision=fp16 on a backend: a model whose float32 intermediate value exceeds 65504 goes wrong
// in float16 on the reference and on ONNX Runtime, and the overflow point is named before any
// float16 backend runs; a model that stays in range agrees within float16 tolerances.
#include "comparator/precision.h"

#include <gtest/gtest.h>

#include <cmath>

#include "backends/backend_test_util.h"
#include "comparator/compare_run.h"

namespace onnxdbg {
namespace {

using testing::ModelDir;

// big = x * 1000 reaches 3000 (fine in float16), huge = big * 1000 reaches 3e6 (inf in float16),
// y = huge / 1e6 is back in range in float32 only.
const char* kOverflow = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (float[1,3] y)
<float k = {1000.0}, float m = {1000000.0}>
{
  big = Mul(x, k)
  huge = Mul(big, k)
  y = Div(huge, m)
}
)";

BackendSpec spec(const std::string& text) { return *BackendSpec::parse(text); }

// The model at `path`, read once as api::run reads it before the comparison.
LoadedModel loaded(const std::filesystem::path& path) {
  auto m = load_model(path);
  EXPECT_TRUE(m.has_value()) << m.status().to_string();
  return m ? std::move(*m) : LoadedModel{};
}

TEST(Precision, SpecOption) {
  EXPECT_EQ(*spec_precision(spec("onnxruntime")), "fp32");
  EXPECT_EQ(*spec_precision(spec("onnxruntime:precision=fp16")), "fp16");
  EXPECT_FALSE(spec_precision(spec("onnxruntime:precision=int8")).has_value());
  EXPECT_TRUE(without_precision(spec("reference:precision=fp16")).options.empty());
  EXPECT_TRUE(validate_backend_spec(spec("opencv:precision=fp16")).is_ok());
  const Status bad = validate_backend_spec(spec("reference:precision=bf16"));
  EXPECT_NE(bad.message().find("precision must be fp32 or fp16"), std::string::npos)
      << bad.message();
}

TEST(Precision, Fp16OverflowIsNamedAndSeenOnEveryBackend) {
  ModelDir dir;
  const auto model = dir.write_model(kOverflow);
  const TensorMap inputs = {{"x", Tensor::from_vector<float>({1, 3}, {1.0f, 2.0f, 3.0f})}};

  auto found = find_fp16_overflows(loaded(model), {inputs});
  ASSERT_EQ(found.size(), 1u);
  auto& overflows = found[0];
  ASSERT_TRUE(overflows.has_value()) << overflows.status().to_string();
  ASSERT_EQ(overflows->size(), 1u);  // huge (3e6); big (3000) and y (3) are in range
  EXPECT_EQ((*overflows)[0].tensor, "huge");
  EXPECT_EQ((*overflows)[0].node_index, 1u);  // the second Mul (the text format names no nodes)
  EXPECT_EQ((*overflows)[0].op_type, "Mul");
  EXPECT_DOUBLE_EQ((*overflows)[0].max_abs, 3e6);

  CompareRunOptions opt;
  const CompareRunReport rep = run_and_compare(
      loaded(model),
      {spec("reference"), spec("reference:precision=fp16"), spec("onnxruntime:precision=fp16")},
      inputs, opt);
  ASSERT_EQ(rep.backends.size(), 3u);
  for (const auto& b : rep.backends) ASSERT_TRUE(b.ok) << b.spec.to_string() << ": " << b.error;
  EXPECT_EQ(rep.verdict, Verdict::kDisagree);
  // The reference rounds every float16 op's result: huge overflows to inf.
  const float* ref16 = rep.backends[1].outputs.at("y").data<float>();
  EXPECT_TRUE(std::isinf(ref16[0])) << ref16[0];
  // ONNX Runtime's CPU provider has no float16 Mul/Div and silently runs them in float32 (its
  // InsertCastTransformer), so huge survives; only m, clamped to 65504 in the float16 model,
  // shows: y = 1e6 / 65504 for x = 1. Both disagree with float32.
  const float* ort16 = rep.backends[2].outputs.at("y").data<float>();
  EXPECT_NEAR(ort16[0], 1e6 / 65504.0, 1e-2);
  // ... and the report says so: its output holds values float16 cannot represent.
  auto computed_in_float32 = [](const BackendRun& b) {
    for (const auto& w : b.info.warnings)
      if (w.find("output 'y' holds values float16 cannot represent: this backend computed it in "
                 "float32") != std::string::npos)
        return true;
    return false;
  };
  EXPECT_TRUE(computed_in_float32(rep.backends[2]));
  EXPECT_FALSE(computed_in_float32(rep.backends[1]));
  EXPECT_FALSE(computed_in_float32(rep.backends[0]));
  for (const auto& c : rep.comparisons) EXPECT_FALSE(c.result.pass) << c.backend;
  ASSERT_FALSE(rep.fp16_overflows.empty());
  EXPECT_EQ(rep.fp16_overflows[0].tensor, "huge");
}

// Widened float16 values (normal, subnormal, the largest, inf) have the 13 low mantissa bits of
// their float32 form clear; a float32 value with any of them set is not one.
TEST(Precision, TellsFloat16ValuesFromFloat32Ones) {
  std::vector<float> widened;
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 5.96046448e-08f /* 2^-24 */, 0.0999755859f, INFINITY,
                  -INFINITY})
    widened.push_back(static_cast<float>(Float16(v)));
  EXPECT_EQ(widened[5], 0.0999755859f);  // float16's nearest to 0.1, exactly
  const auto half = Tensor::from_vector<float>({8}, widened);
  EXPECT_FALSE(holds_non_float16_values(half));
  for (float v : {0.1f, 65505.0f, 1.0f + 1.0f / 4096, 3e-8f}) {
    std::vector<float> one = widened;
    one[3] = v;
    EXPECT_TRUE(holds_non_float16_values(Tensor::from_vector<float>({8}, one))) << v;
  }
  EXPECT_FALSE(holds_non_float16_values(Tensor::from_vector<int32_t>({2}, {7, 123457})));
}

TEST(Precision, InRangeModelAgreesWithinFloat16Tolerance) {
  ModelDir dir;
  const auto model = dir.write_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (float[1,3] y)
<float k = {0.1}>
{
  a = Mul(x, k)
  y = Sigmoid(a)
}
)");
  const TensorMap inputs = {{"x", Tensor::from_vector<float>({1, 3}, {1.0f, -2.0f, 3.0f})}};
  CompareRunOptions opt;
  opt.tolerance.default_tol.atol = 1e-3;
  opt.tolerance.default_tol.rtol = 1e-3;
  const CompareRunReport rep = run_and_compare(
      loaded(model), {spec("reference"), spec("onnxruntime:precision=fp16")}, inputs, opt);
  EXPECT_EQ(rep.verdict, Verdict::kAgree) << rep.verdict_line;
  EXPECT_TRUE(rep.fp16_overflows.empty());
  // It really ran in float16: not bit-identical to float32.
  ASSERT_EQ(rep.comparisons.size(), 1u);
  EXPECT_GT(rep.comparisons[0].result.max_abs_error, 0.0);
}

}  // namespace
}  // namespace onnxdbg
