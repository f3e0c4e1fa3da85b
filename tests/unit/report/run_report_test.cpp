// How a comparison's error is stated: in a low-precision type's steps, and for a quantized tensor
// in quantization steps and dequantized units, alike in the table cell and the JSON.
#include "report/run_report.h"

#include <gtest/gtest.h>

#include "compare/error_text.h"
#include "onnxdbg/compare.h"

namespace onnxdbg::report {
namespace {

TEST(RunReport, QuantizedErrorsInQuantizationStepsAndDequantized) {
  Tensor a = Tensor::from_vector<uint8_t>({3}, {10, 13, 200});
  Tensor e = Tensor::from_vector<uint8_t>({3}, {10, 10, 199});
  TensorComparison r = compare_tensors(a, e, {0, 0});
  EXPECT_EQ(r.step_dtype, DType::kUndefined);  // a uint8 tensor is not known quantized...
  EXPECT_EQ(max_abs_error_text(r), "3");
  mark_quantized(r, DType::kUint8, 0.02);  // ...until its QuantizeLinear says with what scale
  EXPECT_EQ(max_abs_error_text(r), "3 (3 uint8 quantization steps, 0.06 dequantized)");
  nlohmann::json j;
  add_step_fields(j, r);
  EXPECT_EQ(j["step_dtype"], "uint8");
  EXPECT_DOUBLE_EQ(j["max_error_steps"].get<double>(), 3);
  EXPECT_DOUBLE_EQ(j["quant_scale"].get<double>(), 0.02);
  EXPECT_NEAR(j["max_dequantized_error"].get<double>(), 0.06, 1e-12);
  // A float tensor is never marked quantized.
  TensorComparison f = compare_tensors(Tensor::from_vector<float>({1}, {1}),
                                       Tensor::from_vector<float>({1}, {2}), {});
  mark_quantized(f, DType::kFloat, 0.5);
  EXPECT_EQ(f.quant_scale, 0);
  nlohmann::json jf;
  add_step_fields(jf, f);
  EXPECT_TRUE(jf["quant_scale"].is_null());
  EXPECT_TRUE(jf["step_dtype"].is_null());
}

TEST(RunReport, LowPrecisionStepsAreSingularForOne) {
  Tensor a(DType::kInt4, {1}), e(DType::kInt4, {1});
  a.set_from_double(0, 3);
  e.set_from_double(0, 2);
  EXPECT_EQ(max_abs_error_text(compare_tensors(a, e, {0, 0})), "1 (1 int4 step)");
}

}  // namespace
}  // namespace onnxdbg::report
