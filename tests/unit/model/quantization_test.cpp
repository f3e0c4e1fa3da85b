// quantized_tensors: the scale and zero point of each quantized tensor, read from the QDQ and
// integer ops of a graph (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul).
#include "model/quantization.h"

#include <gtest/gtest.h>

#include "../test_util.h"

namespace onnxdbg {
namespace {

constexpr const char* kQdq = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  qdq (float[2, 4] x, float[4, 3] b) => (float[2, 3] y, uint8[4, 3] bq)
      <float s = {0.02}, uint8 zp = {128}, float[3] axis_s = {0.1, 0.2, 0.3}, float ys = {0.5},
       uint8 yzp = {7}> {
    xq = QuantizeLinear(x, s, zp)
    bq, bs, bzp = DynamicQuantizeLinear(b)
    cs = Constant <value = float {0.25}> ()
    yq = QLinearMatMul(xq, s, zp, bq, bs, bzp, cs, yzp)
    w = DequantizeLinear(bq, axis_s)
    y = DequantizeLinear(yq, ys, yzp)
  }
)";

TEST(Quantization, ScalesAndZeroPointsComeFromTheOpsThatMakeOrTakeATensor) {
  const onnx::ModelProto m = testing::parse_text_model(kQdq);
  const auto q = quantized_tensors(m.graph());
  ASSERT_TRUE(q.count("xq") && q.count("bq") && q.count("yq"));
  EXPECT_FALSE(q.count("x"));
  EXPECT_FALSE(q.count("y"));
  // The QuantizeLinear output: inline scalars.
  EXPECT_EQ(q.at("xq").op_type, "QuantizeLinear");
  EXPECT_DOUBLE_EQ(*q.at("xq").scale, 0.02f);
  EXPECT_EQ(*q.at("xq").zero_point, 128);
  EXPECT_EQ(quant_params_text(q.at("xq")), "scale 0.02, zero point 128");
  // DynamicQuantizeLinear computes its scale: named, not read; the first op to describe bq wins.
  EXPECT_EQ(q.at("bq").op_type, "DynamicQuantizeLinear");
  EXPECT_FALSE(q.at("bq").scale);
  EXPECT_EQ(q.at("bq").scale_tensor, "bs");
  EXPECT_EQ(quant_params_text(q.at("bq")), "scale 'bs' (computed), zero point 'bzp'");
  // The QLinearMatMul output: its scale from a Constant node, its zero point an initializer.
  EXPECT_EQ(q.at("yq").op_type, "QLinearMatMul");
  EXPECT_DOUBLE_EQ(*q.at("yq").scale, 0.25);
  EXPECT_EQ(*q.at("yq").zero_point, 7);
}

TEST(Quantization, PerAxisScalesAndOmittedZeroPoints) {
  const onnx::ModelProto m = testing::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int8[3, 4] wq) => (float[3, 4] w) <float[3] s = {0.1, 0.2, 0.3}> {
      w = DequantizeLinear <axis = 0> (wq, s)
    }
  )");
  const auto q = quantized_tensors(m.graph());
  ASSERT_TRUE(q.count("wq"));
  EXPECT_FALSE(q.at("wq").scale);
  EXPECT_EQ(q.at("wq").scale_count, 3);
  EXPECT_EQ(*q.at("wq").zero_point, 0);  // omitted: 0 by the spec
  EXPECT_EQ(quant_params_text(q.at("wq")), "per-axis scale [3], zero point 0");
}

}  // namespace
}  // namespace onnxdbg
