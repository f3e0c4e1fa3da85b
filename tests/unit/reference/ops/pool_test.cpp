// Pooling kernels (MaxPool with Indices, ceil_mode, dilations and storage_order; AveragePool with
// and without count_include_pad; LpPool; the global pools) against values worked out by hand.
#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;

std::vector<float> iota_vec(int64_t n, float start = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return v;
}

TEST(MaxPool, CeilModeAddsAPartialWindow) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 12]>
g (float[1,1,4,4] x) => (float[1,1,2,2] y) { y = MaxPool<kernel_shape=[3,3], strides=[2,2], ceil_mode=1>(x) }
)");
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({1, 1, 4, 4}, iota_vec(16))}});
  expect_tensor_near(r["y"], {1, 1, 2, 2}, {11, 12, 15, 16});
  // Without ceil_mode only the first window fits.
  auto floor_model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 12]>
g (float[1,1,4,4] x) => (float[1,1,1,1] y) { y = MaxPool<kernel_shape=[3,3], strides=[2,2]>(x) }
)");
  r = run_reference(floor_model, {{"x", Tensor::from_vector<float>({1, 1, 4, 4}, iota_vec(16))}});
  expect_tensor_near(r["y"], {1, 1, 1, 1}, {11});
}

TEST(MaxPool, IndicesAreFlatOverTheWholeTensorInBothStorageOrders) {
  // Two channels of 3x3; the maximum of each 2x2 window (stride 1) is its bottom-right element.
  for (int order : {0, 1}) {
    auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 12]>
g (float[1,2,3,3] x) => (float[1,2,2,2] y, int64[1,2,2,2] i) {
  y, i = MaxPool<kernel_shape=[2,2], storage_order=)" +
                                  std::to_string(order) + R"(>(x)
}
)");
    auto r = run_reference(model, {{"x", Tensor::from_vector<float>({1, 2, 3, 3}, iota_vec(18))}});
    expect_tensor_near(r["y"], {1, 2, 2, 2}, {5, 6, 8, 9, 14, 15, 17, 18});
    // Row-major plane offsets of (1,1), (1,2), (2,1), (2,2); column-major swaps rows and columns.
    std::vector<double> want = order == 0 ? std::vector<double>{4, 5, 7, 8, 13, 14, 16, 17}
                                          : std::vector<double>{4, 7, 5, 8, 13, 16, 14, 17};
    SCOPED_TRACE(order);
    expect_tensor_near(r["i"], {1, 2, 2, 2}, want);
  }
}

TEST(MaxPool, DilationsPadsAndUint8) {
  // 1-D: x = 0..6 (uint8), kernel 2 with dilation 2, pads 1 on both sides, stride 2.
  // Windows start at -1, 1, 3, 5 and read positions {-1, 1}, {1, 3}, {3, 5}, {5, 7}.
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 12]>
g (uint8[1,1,7] x) => (uint8[1,1,4] y) { y = MaxPool<kernel_shape=[2], dilations=[2], pads=[1,1], strides=[2]>(x) }
)");
  auto r =
      run_reference(model, {{"x", Tensor::from_vector<uint8_t>({1, 1, 7}, {0, 1, 2, 3, 4, 5, 6})}});
  ASSERT_EQ(r["y"].dtype(), DType::kUint8);
  expect_tensor_near(r["y"], {1, 1, 4}, {1, 3, 5, 5});
}

TEST(MaxPool, SameUpperPadsAtTheEnd) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 12]>
g (float[1,1,3,3] x) => (float[1,1,2,2] y) { y = MaxPool<kernel_shape=[2,2], strides=[2,2], auto_pad="SAME_UPPER">(x) }
)");
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({1, 1, 3, 3}, iota_vec(9))}});
  expect_tensor_near(r["y"], {1, 1, 2, 2}, {5, 6, 8, 9});
}

TEST(AveragePool, CountIncludePadDividesByTheFullWindow) {
  for (int include : {0, 1}) {
    auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[1,1,3,3] x) => (float[1,1,3,3] y) {
  y = AveragePool<kernel_shape=[3,3], pads=[1,1,1,1], count_include_pad=)" +
                                  std::to_string(include) + R"(>(x)
}
)");
    auto r = run_reference(
        model, {{"x", Tensor::from_vector<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f))}});
    const double c = include ? 4.0 / 9 : 1.0, e = include ? 6.0 / 9 : 1.0;
    SCOPED_TRACE(include);
    expect_tensor_near(r["y"], {1, 1, 3, 3}, {c, e, c, e, 1, e, c, e, c});
  }
}

TEST(AveragePool, CeilModeWindowDividesByItsValidElements) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[1,1,4,4] x) => (float[1,1,2,2] y) { y = AveragePool<kernel_shape=[3,3], strides=[2,2], ceil_mode=1>(x) }
)");
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({1, 1, 4, 4}, iota_vec(16))}});
  // Windows: rows 0-2 x cols 0-2, rows 0-2 x cols 2-3, rows 2-3 x cols 0-2, rows 2-3 x cols 2-3.
  expect_tensor_near(r["y"], {1, 1, 2, 2}, {6, 7.5, 12, 13.5});
}

TEST(LpPool, PTwoIsTheEuclideanNormOfTheWindow) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[1,1,1,4] x) => (float[1,1,1,2] y) { y = LpPool<kernel_shape=[1,2], strides=[1,2], p=2>(x) }
)");
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({1, 1, 1, 4}, {3, -4, 1, 1})}});
  expect_tensor_near(r["y"], {1, 1, 1, 2}, {5, std::sqrt(2.0)});
}

TEST(GlobalPools, AverageMaxAndLpPerPlane) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,2,2] x) => (float[1,2,1,1] a, float[1,2,1,1] m, float[1,2,1,1] l) {
  a = GlobalAveragePool(x)
  m = GlobalMaxPool(x)
  l = GlobalLpPool<p=1>(x)
}
)");
  auto r = run_reference(
      model, {{"x", Tensor::from_vector<float>({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -8})}});
  expect_tensor_near(r["a"], {1, 2, 1, 1}, {2.5, -3.5});
  expect_tensor_near(r["m"], {1, 2, 1, 1}, {4, -1});
  expect_tensor_near(r["l"], {1, 2, 1, 1}, {10, 14});
}

TEST(MaxPool, KernelShapeRankMismatchIsAModelError) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 12]>
g (float[1,1,4,4] x) => (float[1,1,2,2] y) { y = MaxPool<kernel_shape=[2]>(x) }
)");
  auto msg = run_reference_error(model, {{"x", Tensor(DType::kFloat, {1, 1, 4, 4})}});
  EXPECT_NE(msg.find("kernel_shape [2]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1x1x4x4"), std::string::npos) << msg;
}

}  // namespace
}  // namespace onnxdbg
