// Detection and sampling kernels against hand-worked values: NonMaxSuppression (IoU and score
// thresholds, center_point_box, output limit), RoiAlign (both coordinate modes), GridSample
// (modes, padding, align_corners, version 20's mode names and volumes), MaxRoiPool and MaxUnpool.
#include "op_test_util.h"

namespace onnxdbg::testing {
namespace {

// Boxes 0 and 1 overlap with IoU 0.9 / 1.1; box 2 is apart.
Tensor corner_boxes() { return f32({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3}); }

std::string nms_model(const std::string& attrs = "") {
  return R"(<ir_version: 8, opset_import: ["" : 11]>
g (float[1,3,4] b, float[1,1,3] s, int64 m, float iou, float st) => (int64[N,3] z) {
  z = NonMaxSuppression)" +
         attrs + R"((b, s, m, iou, st)
})";
}

TEST(NonMaxSuppression, SuppressesOverlapsAndLowScores) {
  std::map<std::string, Tensor> in{{"b", corner_boxes()},
                                   {"s", f32({1, 1, 3}, {0.9f, 0.8f, 0.7f})},
                                   {"m", Tensor::scalar<int64_t>(3)},
                                   {"iou", Tensor::scalar<float>(0.5f)},
                                   {"st", Tensor::scalar<float>(0.0f)}};
  auto z = run_op(nms_model(), in);
  expect_tensor_near(z, {2, 3}, {0, 0, 0, 0, 0, 2});
  in["st"] = Tensor::scalar<float>(0.75f);
  expect_tensor_near(run_op(nms_model(), in), {1, 3}, {0, 0, 0});
  in["st"] = Tensor::scalar<float>(0.0f);
  in["m"] = Tensor::scalar<int64_t>(1);
  expect_tensor_near(run_op(nms_model(), in), {1, 3}, {0, 0, 0});
  in["m"] = Tensor::scalar<int64_t>(0);
  expect_tensor_near(run_op(nms_model(), in), {0, 3}, {});
}

TEST(NonMaxSuppression, CenterPointBoxes) {
  // The same boxes as centre (x, y) and size (w, h).
  auto z = run_op(nms_model("<center_point_box=1>"),
                  {{"b", f32({1, 3, 4}, {0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 2.5f, 0.5f, 1, 1})},
                   {"s", f32({1, 1, 3}, {0.7f, 0.8f, 0.9f})},
                   {"m", Tensor::scalar<int64_t>(3)},
                   {"iou", Tensor::scalar<float>(0.5f)},
                   {"st", Tensor::scalar<float>(0.0f)}});
  // Highest score first: box 2, then box 1 (box 0 overlaps box 1).
  expect_tensor_near(z, {2, 3}, {0, 0, 2, 0, 0, 1});
}

TEST(RoiAlign, CoordinateModes) {
  // X[h][w] = w, so a bilinear sample returns its x coordinate (clamped to [0, 3]).
  std::vector<float> x;
  for (int h = 0; h < 4; ++h)
    for (int w = 0; w < 4; ++w) x.push_back(static_cast<float>(w));
  std::map<std::string, Tensor> in{{"x", f32({1, 1, 4, 4}, x)},
                                   {"rois", f32({1, 4}, {0, 0, 3, 3})},
                                   {"bi", tensor<int64_t>({1}, {0})}};
  auto v10 = run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (float[1,1,4,4] x, float[1,4] rois, int64[1] bi) => (float[1,1,1,3] z) {
  z = RoiAlign<output_height=1, output_width=3, sampling_ratio=1>(x, rois, bi)
})",
                    in);
  expect_tensor_near(v10, {1, 1, 1, 3}, {0.5, 1.5, 2.5});
  // half_pixel shifts the region by -0.5.
  auto v16 = run_op(R"(<ir_version: 8, opset_import: ["" : 16]>
g (float[1,1,4,4] x, float[1,4] rois, int64[1] bi) => (float[1,1,1,3] z) {
  z = RoiAlign<output_height=1, output_width=3, sampling_ratio=1>(x, rois, bi)
})",
                    in);
  expect_tensor_near(v16, {1, 1, 1, 3}, {0, 1, 2});
  in["bi"] = tensor<int64_t>({1}, {3});
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 16]>
g (float[1,1,4,4] x, float[1,4] rois, int64[1] bi) => (float[1,1,1,1] z) { z = RoiAlign(x, rois, bi) })",
                          in);
  EXPECT_NE(err.find("batch_indices[0] = 3"), std::string::npos) << err;
}

Tensor sample(const std::string& attrs, float gx, float gy) {
  return run_op(R"(<ir_version: 8, opset_import: ["" : 16]>
g (float[1,1,2,2] x, float[1,1,1,2] grid) => (float[1,1,1,1] z) { z = GridSample)" +
                    attrs + R"((x, grid) })",
                {{"x", f32({1, 1, 2, 2}, {1, 2, 3, 4})}, {"grid", f32({1, 1, 1, 2}, {gx, gy})}});
}

TEST(GridSample, ModesAndPadding) {
  // The centre averages all four pixels.
  expect_tensor_near(sample("", 0, 0), {1, 1, 1, 1}, {2.5});
  // (-1, -1) is the corner pixel's centre with align_corners, its outer corner without.
  expect_tensor_near(sample("<align_corners=1>", -1, -1), {1, 1, 1, 1}, {1});
  expect_tensor_near(sample("", -1, -1), {1, 1, 1, 1}, {0.25});
  expect_tensor_near(sample("<padding_mode=\"border\">", -1, -1), {1, 1, 1, 1}, {1});
  expect_tensor_near(sample("<padding_mode=\"reflection\">", -1, -1), {1, 1, 1, 1}, {1});
  // (0.1, 0.1) maps to pixel coordinates (0.6, 0.6): nearest is pixel (1, 1).
  expect_tensor_near(sample("<mode=\"nearest\">", 0.1f, 0.1f), {1, 1, 1, 1}, {4});
  // Bicubic at a pixel centre is that pixel.
  expect_tensor_near(sample("<mode=\"bicubic\", align_corners=1>", 1, -1), {1, 1, 1, 1}, {2});
  auto err =
      run_op_error(R"(<ir_version: 8, opset_import: ["" : 16]>
g (float[1,1,2,2] x, float[1,1,1,2] grid) => (float[1,1,1,1] z) { z = GridSample<mode="area">(x, grid) })",
                   {{"x", f32({1, 1, 2, 2}, {1, 2, 3, 4})}, {"grid", f32({1, 1, 1, 2}, {0, 0})}});
  EXPECT_NE(err.find("unknown mode 'area'"), std::string::npos) << err;
}

TEST(MaxRoiPool, MaxOfEachBin) {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 1]>
g (float[1,1,4,4] x, float[1,5] rois) => (float[1,1,2,2] z) { z = MaxRoiPool<pooled_shape=[2,2]>(x, rois) })",
                  {{"x", f32({1, 1, 4, 4}, x)}, {"rois", f32({1, 5}, {0, 0, 0, 3, 3})}});
  expect_tensor_near(z, {1, 1, 2, 2}, {5, 7, 13, 15});
}

TEST(MaxUnpool, ScattersToFlatIndices) {
  std::map<std::string, Tensor> in{{"x", f32({1, 1, 2, 2}, {5, 6, 7, 8})},
                                   {"i", tensor<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15})}};
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 11]>
g (float[1,1,2,2] x, int64[1,1,2,2] i) => (float[1,1,4,4] z) { z = MaxUnpool<kernel_shape=[2,2], strides=[2,2]>(x, i) })",
                  in);
  expect_tensor_near(z, {1, 1, 4, 4}, {0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8});
  in["s"] = tensor<int64_t>({4}, {1, 1, 5, 5});
  auto big = run_op(R"(<ir_version: 8, opset_import: ["" : 11]>
g (float[1,1,2,2] x, int64[1,1,2,2] i, int64[4] s) => (float[1,1,5,5] z) { z = MaxUnpool<kernel_shape=[2,2], strides=[2,2]>(x, i, s) })",
                    in);
  // Indices address the 4x4 unpooled plane; output_shape pads it to 5x5 at the end.
  expect_tensor_near(big, {1, 1, 5, 5},
                     {0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0});
  in.erase("s");
  in["i"] = tensor<int64_t>({1, 1, 2, 2}, {5, 7, 13, 16});
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 11]>
g (float[1,1,2,2] x, int64[1,1,2,2] i) => (float[1,1,4,4] z) { z = MaxUnpool<kernel_shape=[2,2], strides=[2,2]>(x, i) })",
                          in);
  EXPECT_NE(err.find("index 16"), std::string::npos) << err;
}

TEST(GridSample, Version20ModeNamesAndVolumes) {
  // Mode names of GridSample-20: 'linear' (was 'bilinear') and 'cubic' (was 'bicubic').
  auto linear =
      run_op(R"(<ir_version: 8, opset_import: ["" : 20]>
g (float[1,1,2,2] x, float[1,1,1,2] grid) => (float[1,1,1,1] z) { z = GridSample <mode = "linear"> (x, grid) })",
             {{"x", f32({1, 1, 2, 2}, {1, 2, 3, 4})}, {"grid", f32({1, 1, 1, 2}, {0, 0})}});
  expect_tensor_near(linear, {1, 1, 1, 1}, {2.5});
  auto err =
      run_op_error(R"(<ir_version: 8, opset_import: ["" : 20]>
g (float[1,1,2,2] x, float[1,1,1,2] grid) => (float[1,1,1,1] z) { z = GridSample <mode = "bilinear"> (x, grid) })",
                   {{"x", f32({1, 1, 2, 2}, {1, 2, 3, 4})}, {"grid", f32({1, 1, 1, 2}, {0, 0})}});
  EXPECT_NE(err.find("unknown mode 'bilinear'"), std::string::npos) << err;
  // A 2x2x2 volume holding 4 d + 2 h + w, which trilinear interpolation reproduces exactly; grid
  // components are (x, y, z) = (w, h, d), mapped with align_corners to [0, 1].
  const std::string vol = R"(<ir_version: 8, opset_import: ["" : 22]>
g (float[1,1,2,2,2] x, float[1,1,1,2,3] grid) => (float[1,1,1,1,2] z) { z = GridSample <align_corners = 1, mode = ")";
  const Tensor x = f32({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor grid = f32({1, 1, 1, 2, 3}, {0, 0, 0, 1, -1, 1});
  expect_tensor_near(run_op(vol + R"(linear"> (x, grid) })", {{"x", x}, {"grid", grid}}),
                     {1, 1, 1, 1, 2}, {3.5, 5});
  // Nearest rounds 0.5 to even: (0, 0, 0).
  expect_tensor_near(run_op(vol + R"(nearest"> (x, grid) })", {{"x", x}, {"grid", grid}}),
                     {1, 1, 1, 1, 2}, {0, 5});
}

}  // namespace
}  // namespace onnxdbg::testing
