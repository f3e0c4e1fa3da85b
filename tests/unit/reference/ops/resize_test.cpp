// Resize and Upsample on the reference interpreter: small models in ONNX text format with values
// worked out by hand from the ONNX Resize spec.
#include "../../test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::iota;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;

TEST(Resize, NearestAsymmetricFloorUpsample) {
  // x_original = x / 2 (asymmetric), floor: every input pixel becomes a 2x3 block.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,2,2] x) => (float[1,1,4,6] y) {
      scales = Constant<value = float[4] {1.0, 1.0, 2.0, 3.0}>()
      y = Resize<mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor">(x, , scales)
    })");
  auto out = run_reference(m, {{"x", iota({1, 1, 2, 2}, 1.0f)}});
  expect_tensor_near(out["y"], {1, 1, 4, 6},
                     {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
}

TEST(Resize, NearestDownsampleRoundPreferCeilWithSizes) {
  // in 4 -> out 3 along the last axis: scale 0.75, half_pixel x_original = (x + 0.5) / 0.75 - 0.5
  // = 0.1667, 1.5, 2.8333 -> round_prefer_ceil picks 0, 2, 3.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,3] y) {
      sizes = Constant<value = int64[2] {1, 3}>()
      y = Resize<mode = "nearest", nearest_mode = "round_prefer_ceil">(x, , , sizes)
    })");
  auto out = run_reference(m, {{"x", iota({1, 4}, 10)}});
  expect_tensor_near(out["y"], {1, 3}, {10, 12, 13});
}

TEST(Resize, LinearHalfPixelUpsample) {
  // The ONNX example: 2x2 -> 4x4, x_original = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 with
  // edge clamping.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,2,2] x) => (float[1,1,4,4] y) {
      scales = Constant<value = float[4] {1.0, 1.0, 2.0, 2.0}>()
      y = Resize<mode = "linear">(x, , scales)
    })");
  auto out = run_reference(m, {{"x", iota({1, 1, 2, 2}, 1.0f)}});
  expect_tensor_near(
      out["y"], {1, 1, 4, 4},
      {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
}

TEST(Resize, LinearAlignCornersUsesScaledWidth) {
  // 1x4 -> scale 0.6: out width floor(2.4) = 2; align_corners divides by (2.4 - 1) as the ONNX
  // reference does: x=1 -> 1 * 3 / 1.4 = 2.142857 -> 1 + 2.142857.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,2] y) {
      scales = Constant<value = float[2] {1.0, 0.6}>()
      y = Resize<mode = "linear", coordinate_transformation_mode = "align_corners">(x, , scales)
    })");
  auto out = run_reference(m, {{"x", iota({1, 4}, 1.0f)}});
  expect_tensor_near(out["y"], {1, 2}, {1, 3.142857}, 1e-5);
}

TEST(Resize, CubicOnSamplesIsExact) {
  // Scale 1 with half_pixel lands on input samples: cubic returns the input unchanged.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,5] x) => (float[1,5] y) {
      scales = Constant<value = float[2] {1.0, 1.0}>()
      y = Resize<mode = "cubic">(x, , scales)
    })");
  auto out = run_reference(m, {{"x", iota({1, 5}, 1.0f)}});
  expect_tensor_near(out["y"], {1, 5}, {1, 2, 3, 4, 5});
}

TEST(Resize, CubicMidpointWeights) {
  // 1-D, 4 samples [0, 0, 1, 0] upsampled x2 with asymmetric coordinates: output 3 sits at
  // x_original 1.5, taps 0..3 with A = -0.75 weights (-0.09375, 0.59375, 0.59375, -0.09375).
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x) => (float[8] y) {
      scales = Constant<value = float[1] {2.0}>()
      y = Resize<mode = "cubic", coordinate_transformation_mode = "asymmetric">(x, , scales)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({4}, {0, 0, 1, 0})}});
  ASSERT_EQ(out["y"].numel(), 8);
  EXPECT_NEAR(out["y"].data<float>()[3], 0.59375, 1e-6);
  EXPECT_NEAR(out["y"].data<float>()[4], 1.0, 1e-6);
  EXPECT_NEAR(out["y"].data<float>()[2], 0.0, 1e-6);
}

TEST(Resize, TfCropAndResizeExtrapolates) {
  // roi [0.5, 1.5] of a 3-element axis, 3 outputs: x_original = 0.5*2 + x * 1 * 2 / 2 = 1, 2, 3;
  // 3 is outside [0, 2] and gives extrapolation_value.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3] x) => (float[3] y) {
      roi = Constant<value = float[2] {0.5, 1.5}>()
      sizes = Constant<value = int64[1] {3}>()
      y = Resize<mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = -7.0>(x, roi, , sizes)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({3}, {10, 20, 30})}});
  expect_tensor_near(out["y"], {3}, {20, 30, -7});
}

TEST(Resize, Uint8LinearAlignCorners) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (uint8[2] x) => (uint8[4] y) {
      scales = Constant<value = float[1] {2.0}>()
      y = Resize<mode = "linear", coordinate_transformation_mode = "align_corners">(x, , scales)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<uint8_t>({2}, {0, 30})}});
  expect_tensor_near(out["y"], {4}, {0, 10, 20, 30});
}

TEST(Resize, Opset10NearestUsesAsymmetricCoordinates) {
  auto m = parse_text_model(R"(
    <ir_version: 5, opset_import: ["" : 10]>
    g (float[1,3] x) => (float[1,6] y) {
      scales = Constant<value = float[2] {1.0, 2.0}>()
      y = Resize<mode = "nearest">(x, scales)
    })");
  auto out = run_reference(m, {{"x", iota({1, 3}, 1.0f)}});
  expect_tensor_near(out["y"], {1, 6}, {1, 1, 2, 2, 3, 3});
}

TEST(Resize, UpsampleLinear) {
  // Upsample-9 linear is asymmetric: x_original = x / 2 -> 0, 0.5, 1, 1.5 (clamped).
  auto m = parse_text_model(R"(
    <ir_version: 5, opset_import: ["" : 9]>
    g (float[1,2] x) => (float[1,4] y) {
      scales = Constant<value = float[2] {1.0, 2.0}>()
      y = Upsample<mode = "linear">(x, scales)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({1, 2}, {2, 4})}});
  expect_tensor_near(out["y"], {1, 4}, {2, 3, 4, 4});
}

TEST(Resize, ScalesAndSizesTogetherIsAnError) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2] x) => (float[1,4] y) {
      scales = Constant<value = float[2] {1.0, 2.0}>()
      sizes = Constant<value = int64[2] {1, 4}>()
      y = Resize(x, , scales, sizes)
    })");
  const std::string err = run_reference_error(m, {{"x", iota({1, 2}, 1.0f)}});
  EXPECT_NE(err.find("only one of scales and sizes"), std::string::npos) << err;
  EXPECT_NE(err.find("Resize"), std::string::npos) << err;
}

TEST(Resize, WrongScaleCountNamesShape) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2] x) => (float[1,4] y) {
      scales = Constant<value = float[1] {2.0}>()
      y = Resize(x, , scales)
    })");
  const std::string err = run_reference_error(m, {{"x", iota({1, 2}, 1.0f)}});
  EXPECT_NE(err.find("1x2"), std::string::npos) << err;
}

TEST(Resize, AxesOnlyResizeTheListedAxes) {
  // Width doubles (half_pixel, round_prefer_floor: x_original = -0.25, 0.25, 0.75, 1.25 -> 0, 0,
  // 1, 1); the other axes keep their size.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1,1,2,2] x) => (float[1,1,2,4] y) {
      scales = Constant<value = float[1] {2.0}>()
      y = Resize<mode = "nearest", axes = [-1]>(x, , scales)
    })");
  auto out = run_reference(m, {{"x", iota({1, 1, 2, 2}, 1.0f)}});
  expect_tensor_near(out["y"], {1, 1, 2, 4}, {1, 1, 2, 2, 3, 3, 4, 4});
}

TEST(Resize, KeepAspectRatioPolicy) {
  // sizes [3, 3] for a 2x4 plane: scales 1.5 and 0.75; not_larger takes 0.75 for both axes
  // (output 2x3), not_smaller 1.5 (output 3x6).
  auto run = [](const std::string& policy) {
    auto m = parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 18]>
      g (float[1,1,2,4] x) => (float[1,1,N,M] y) {
        sizes = Constant<value = int64[2] {3, 3}>()
        y = Resize<mode = "nearest", axes = [2, 3], keep_aspect_ratio_policy = ")" +
                              policy + R"(">(x, , , sizes)
      })");
    return run_reference(m, {{"x", iota({1, 1, 2, 4}, 1.0f)}})["y"];
  };
  // Rows: x_original = 0.17, 1.5 -> 0, 1; columns 0.17, 1.5, 2.83 -> 0, 1, 3.
  expect_tensor_near(run("not_larger"), {1, 1, 2, 3}, {1, 2, 4, 5, 6, 8});
  EXPECT_EQ(shape_to_string(run("not_smaller").shape()), "1x1x3x6");
  // A common scale whose sizes cannot be indexed is refused before anything is allocated.
  auto huge = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[1,1,2,4] x) => (float[1,1,N,M] y) {
      sizes = Constant<value = int64[2] {4611686018427387904, 1}>()
      y = Resize<mode = "nearest", axes = [2, 3], keep_aspect_ratio_policy = "not_smaller">(x, , , sizes)
    })");
  auto err = run_reference_error(huge, {{"x", iota({1, 1, 2, 4}, 1.0f)}});
  EXPECT_NE(err.find("a size too large to index"), std::string::npos) << err;
}

TEST(Resize, AntialiasStretchesTheFilterWhenDownscaling) {
  // 4 -> 2 samples, scale 0.5: the triangle filter widens to 4 taps with weights 1, 3, 3, 1 / 8
  // around x_original = 0.5 and 2.5 (edge samples repeat): 1.625 and 3.375 instead of plain
  // linear's 1.5 and 3.5.
  auto run = [](int antialias) {
    auto m = parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 18]>
      g (float[4] x) => (float[2] y) {
        scales = Constant<value = float[1] {0.5}>()
        y = Resize<mode = "linear", antialias = )" +
                              std::to_string(antialias) + R"(>(x, , scales)
      })");
    return run_reference(m, {{"x", iota({4}, 1.0f)}})["y"];
  };
  expect_tensor_near(run(1), {2}, {1.625, 3.375});
  expect_tensor_near(run(0), {2}, {1.5, 3.5});
  auto bad = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x) => (float[2] y) {
      scales = Constant<value = float[1] {0.5}>()
      y = Resize<mode = "linear", antialias = 1>(x, , scales)
    })");
  auto err = run_reference_error(bad, {{"x", iota({4}, 1.0f)}});
  EXPECT_NE(err.find("need opset 18"), std::string::npos) << err;
}

}  // namespace
}  // namespace onnxdbg
