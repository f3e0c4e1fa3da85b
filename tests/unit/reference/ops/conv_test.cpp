// Conv and ConvTranspose against naive loop implementations written here: groups, depthwise,
// dilations, strides, asymmetric pads, auto_pad, 1-D, banded im2col, output_padding and
// output_shape, and the errors for inconsistent shapes; Col2Im and DeformConv against
// hand-computed values.
#include <cmath>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;

std::vector<float> ramp(int64_t n, float scale = 0.1f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = std::sin(static_cast<float>(i) * 1.7f + 0.3f) * scale * 10;
  return v;
}

struct Conv2dParams {
  int64_t group = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
};

// Naive grouped 2-D convolution; x is N x C x H x W, w is M x C/group x KH x KW.
std::vector<double> naive_conv2d(const std::vector<float>& x, const Shape& xs,
                                 const std::vector<float>& w, const Shape& ws,
                                 const std::vector<float>& bias, const Conv2dParams& p,
                                 Shape& out_shape) {
  const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], m = ws[0], kh = ws[2], kw = ws[3];
  const int64_t oh = (h + p.pt + p.pb - ((kh - 1) * p.dh + 1)) / p.sh + 1;
  const int64_t ow = (wd + p.pl + p.pr - ((kw - 1) * p.dw + 1)) / p.sw + 1;
  const int64_t cg = c / p.group, mg = m / p.group;
  out_shape = {n, m, oh, ow};
  std::vector<double> y(static_cast<size_t>(n * m * oh * ow), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(o)];
          const int64_t g = o / mg;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t yy = i * p.sh - p.pt + a * p.dh, xx = j * p.sw - p.pl + e * p.dw;
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                acc += static_cast<double>(
                           x[static_cast<size_t>(((b * c + g * cg + ci) * h + yy) * wd + xx)]) *
                       w[static_cast<size_t>(((o * cg + ci) * kh + a) * kw + e)];
              }
          y[static_cast<size_t>(((b * m + o) * oh + i) * ow + j)] = acc;
        }
  return y;
}

TEST(Conv, GroupedDilatedStridedPaddedMatchesNaiveLoop) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,4,7,6] x, float[6,2,3,2] w, float[6] b) => (float[2,6,4,5] y) {
  y = Conv<group=2, strides=[2,1], dilations=[1,2], pads=[1,0,2,1]>(x, w, b)
}
)");
  const Shape xs{2, 4, 7, 6}, ws{6, 2, 3, 2};
  auto x = ramp(2 * 4 * 7 * 6), w = ramp(6 * 2 * 3 * 2, 0.05f), b = ramp(6, 0.2f);
  Shape out;
  auto want = naive_conv2d(x, xs, w, ws, b, {2, 2, 1, 1, 2, 1, 0, 2, 1}, out);
  auto r = run_reference(model, {{"x", Tensor::from_vector(xs, x)},
                                 {"w", Tensor::from_vector(ws, w)},
                                 {"b", Tensor::from_vector<float>({6}, b)}});
  ASSERT_TRUE(r.count("y"));
  expect_tensor_near(r["y"], out, want, 1e-4, 1e-4);
}

TEST(Conv, DepthwiseWithKernelShapeAttribute) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[1,3,5,5] x, float[3,1,3,3] w) => (float[1,3,5,5] y) {
  y = Conv<group=3, kernel_shape=[3,3], pads=[1,1,1,1]>(x, w)
}
)");
  const Shape xs{1, 3, 5, 5}, ws{3, 1, 3, 3};
  auto x = ramp(75), w = ramp(27, 0.05f);
  Shape out;
  auto want = naive_conv2d(x, xs, w, ws, {}, {3, 1, 1, 1, 1, 1, 1, 1, 1}, out);
  auto r =
      run_reference(model, {{"x", Tensor::from_vector(xs, x)}, {"w", Tensor::from_vector(ws, w)}});
  expect_tensor_near(r["y"], out, want, 1e-4, 1e-4);
}

TEST(Conv, AutoPadSameLowerAndUpperSplitOddPadding) {
  // Kernel 2, stride 1 on 4 needs one pad: SAME_UPPER puts it at the end, SAME_LOWER at the start.
  const Shape xs{1, 1, 4, 4}, ws{1, 1, 2, 2};
  auto x = ramp(16), w = std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f};
  for (const std::string mode : {"SAME_UPPER", "SAME_LOWER"}) {
    auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,4,4] x, float[1,1,2,2] w) => (float[1,1,4,4] y) { y = Conv<auto_pad=")" +
                                  mode + R"(">(x, w) }
)");
    Conv2dParams p;
    if (mode == "SAME_UPPER")
      p.pb = p.pr = 1;
    else
      p.pt = p.pl = 1;
    Shape out;
    auto want = naive_conv2d(x, xs, w, ws, {}, p, out);
    auto r = run_reference(model,
                           {{"x", Tensor::from_vector(xs, x)}, {"w", Tensor::from_vector(ws, w)}});
    SCOPED_TRACE(mode);
    expect_tensor_near(r["y"], out, want, 1e-5, 1e-5);
  }
}

TEST(Conv, AutoPadValidAndStrides) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,7,7] x, float[3,2,3,3] w) => (float[1,3,3,3] y) { y = Conv<auto_pad="VALID", strides=[2,2]>(x, w) }
)");
  const Shape xs{1, 2, 7, 7}, ws{3, 2, 3, 3};
  auto x = ramp(98), w = ramp(54, 0.05f);
  Shape out;
  auto want = naive_conv2d(x, xs, w, ws, {}, {1, 2, 2, 1, 1, 0, 0, 0, 0}, out);
  auto r =
      run_reference(model, {{"x", Tensor::from_vector(xs, x)}, {"w", Tensor::from_vector(ws, w)}});
  expect_tensor_near(r["y"], out, want, 1e-4, 1e-4);
}

TEST(Conv, OneDimensionalMatchesTwoDimensionalWithUnitHeight) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,9] x, float[3,2,3] w) => (float[1,3,5] y) { y = Conv<strides=[2], pads=[1,1]>(x, w) }
)");
  auto x = ramp(18), w = ramp(18, 0.05f);
  Shape out;
  auto want = naive_conv2d(x, {1, 2, 1, 9}, w, {3, 2, 1, 3}, {}, {1, 1, 2, 1, 1, 0, 1, 0, 1}, out);
  auto r = run_reference(model, {{"x", Tensor::from_vector<float>({1, 2, 9}, x)},
                                 {"w", Tensor::from_vector<float>({3, 2, 3}, w)}});
  expect_tensor_near(r["y"], {1, 3, 5}, want, 1e-4, 1e-4);
}

TEST(Conv, LargeOutputProcessedInBandsMatchesNaiveLoop) {
  // 16 channels x 3x3 x 512 columns x 512 rows exceeds the im2col budget, so rows go in bands.
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,16,512,512] x, float[2,16,3,3] w) => (float[1,2,512,512] y) { y = Conv<pads=[1,1,1,1]>(x, w) }
)");
  const Shape xs{1, 16, 512, 512}, ws{2, 16, 3, 3};
  auto x = ramp(16 * 512 * 512), w = ramp(2 * 16 * 9, 0.05f);
  Shape out;
  auto want = naive_conv2d(x, xs, w, ws, {}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, out);
  auto r =
      run_reference(model, {{"x", Tensor::from_vector(xs, x)}, {"w", Tensor::from_vector(ws, w)}});
  expect_tensor_near(r["y"], out, want, 1e-3, 1e-4);
}

TEST(Conv, DoubleUsesDgemm) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (double[1,1,3,3] x, double[1,1,2,2] w) => (double[1,1,2,2] y) { y = Conv(x, w) }
)");
  auto r = run_reference(
      model, {{"x", Tensor::from_vector<double>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
              {"w", Tensor::from_vector<double>({1, 1, 2, 2}, {1, 0, 0, -1})}});
  expect_tensor_near(r["y"], {1, 1, 2, 2}, {-4, -4, -4, -4});
}

TEST(Conv, ChannelsNotDivisibleByGroupIsAModelError) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,4,4] x, float[2,1,3,3] w) => (float[1,2,2,2] y) { y = Conv<group=2>(x, w) }
)");
  auto msg = run_reference_error(model, {{"x", Tensor(DType::kFloat, {1, 3, 4, 4})},
                                         {"w", Tensor(DType::kFloat, {2, 1, 3, 3})}});
  EXPECT_NE(msg.find("divisible by group"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1x3x4x4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(Conv)"), std::string::npos) << msg;
}

TEST(Conv, WeightRankMismatchIsAModelError) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,4,4] x, float[2,3,3] w) => (float[1,2,2,2] y) { y = Conv(x, w) }
)");
  auto msg = run_reference_error(
      model, {{"x", Tensor(DType::kFloat, {1, 3, 4, 4})}, {"w", Tensor(DType::kFloat, {2, 3, 3})}});
  EXPECT_NE(msg.find("ranks must be equal"), std::string::npos) << msg;
}

// Naive 2-D transposed convolution: scatter every input element through the kernel into the full
// output, then crop pads_begin and take out_h x out_w.
std::vector<double> naive_conv_transpose2d(const std::vector<float>& x, const Shape& xs,
                                           const std::vector<float>& w, const Shape& ws,
                                           int64_t group, int64_t stride, int64_t pad_begin,
                                           int64_t out_h, int64_t out_w) {
  const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], mg = ws[1], kh = ws[2], kw = ws[3];
  const int64_t m = mg * group, cg = c / group;
  std::vector<double> y(static_cast<size_t>(n * m * out_h * out_w), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < wd; ++j)
          for (int64_t mo = 0; mo < mg; ++mo)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t oy = i * stride + a - pad_begin, ox = j * stride + e - pad_begin;
                if (oy < 0 || oy >= out_h || ox < 0 || ox >= out_w) continue;
                const int64_t o = (ci / cg) * mg + mo;
                y[static_cast<size_t>(((b * m + o) * out_h + oy) * out_w + ox)] +=
                    static_cast<double>(x[static_cast<size_t>(((b * c + ci) * h + i) * wd + j)]) *
                    w[static_cast<size_t>(((ci * mg + mo) * kh + a) * kw + e)];
              }
  return y;
}

TEST(ConvTranspose, StridesPadsAndOutputPaddingMatchNaiveLoop) {
  // out = 2 * (3 - 1) + 1 + 3 - 1 - 1 = 6
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3,3] x, float[2,3,3,3] w) => (float[1,3,6,6] y) {
  y = ConvTranspose<strides=[2,2], pads=[1,1,1,1], output_padding=[1,1]>(x, w)
}
)");
  const Shape xs{1, 2, 3, 3}, ws{2, 3, 3, 3};
  auto x = ramp(18), w = ramp(54, 0.05f);
  auto want = naive_conv_transpose2d(x, xs, w, ws, 1, 2, 1, 6, 6);
  auto r =
      run_reference(model, {{"x", Tensor::from_vector(xs, x)}, {"w", Tensor::from_vector(ws, w)}});
  expect_tensor_near(r["y"], {1, 3, 6, 6}, want, 1e-4, 1e-4);
}

TEST(ConvTranspose, GroupedWithOutputShapeAndBias) {
  // Full output 2 * (3 - 1) + 3 = 7; output_shape 6 leaves a total padding of 1, which the spec
  // puts at the start for NOTSET.
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,3,3] x, float[4,1,3,3] w, float[2] b) => (float[1,2,6,6] y) {
  y = ConvTranspose<group=2, strides=[2,2], output_shape=[6,6]>(x, w, b)
}
)");
  const Shape xs{1, 4, 3, 3}, ws{4, 1, 3, 3};
  auto x = ramp(36), w = ramp(36, 0.05f);
  auto want = naive_conv_transpose2d(x, xs, w, ws, 2, 2, 1, 6, 6);
  for (size_t i = 0; i < want.size(); ++i) want[i] += i < 36 ? 0.5 : -1.0;
  auto r = run_reference(model, {{"x", Tensor::from_vector(xs, x)},
                                 {"w", Tensor::from_vector(ws, w)},
                                 {"b", Tensor::from_vector<float>({2}, {0.5f, -1.0f})}});
  expect_tensor_near(r["y"], {1, 2, 6, 6}, want, 1e-4, 1e-4);
}

TEST(ConvTranspose, WrongWeightChannelsIsAModelError) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3,3] x, float[3,1,3,3] w) => (float[1,1,5,5] y) { y = ConvTranspose(x, w) }
)");
  auto msg = run_reference_error(model, {{"x", Tensor(DType::kFloat, {1, 2, 3, 3})},
                                         {"w", Tensor(DType::kFloat, {3, 1, 3, 3})}});
  EXPECT_NE(msg.find("W's first dim must equal X's channels"), std::string::npos) << msg;
}

TEST(Col2Im, AddsOverlappingBlocks) {
  // 2x2 blocks at the 4 positions of a 3x3 image; block position l holds l + 1 in every entry,
  // so each pixel sums the positions of the blocks that cover it.
  std::vector<float> cols;
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 4; ++l) cols.push_back(static_cast<float>(l + 1));
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 18]>
    g (float[1,4,4] x, int64[2] img, int64[2] blk) => (float[1,1,3,3] z) { z = Col2Im(x, img, blk) })";
  auto z = testing::run_op(m, {{"x", testing::f32({1, 4, 4}, cols)},
                               {"img", testing::tensor<int64_t>({2}, {3, 3})},
                               {"blk", testing::tensor<int64_t>({2}, {2, 2})}});
  testing::expect_tensor_near(z, {1, 1, 3, 3}, {1, 3, 2, 4, 10, 6, 3, 7, 4});
  // Strides 2 and pads 1 around a 2x2 image: each 2x2 block keeps only its inner pixel.
  auto s = testing::run_op(R"(<ir_version: 8, opset_import: ["" : 18]>
    g (float[1,4,4] x, int64[2] img, int64[2] blk) => (float[1,1,2,2] z) { z = Col2Im <strides = [2, 2], pads = [1, 1, 1, 1]> (x, img, blk) })",
                           {{"x", testing::f32({1, 4, 4}, cols)},
                            {"img", testing::tensor<int64_t>({2}, {2, 2})},
                            {"blk", testing::tensor<int64_t>({2}, {2, 2})}});
  testing::expect_tensor_near(s, {1, 1, 2, 2}, {1, 2, 3, 4});
  auto err = testing::run_op_error(m, {{"x", testing::f32({1, 4, 4}, cols)},
                                       {"img", testing::tensor<int64_t>({2}, {4, 4})},
                                       {"blk", testing::tensor<int64_t>({2}, {2, 2})}});
  EXPECT_NE(err.find("input has 4 blocks (dim 2) but image_shape [4, 4] holds 9"),
            std::string::npos)
      << err;
}

TEST(DeformConv, OffsetsMaskAndBias) {
  const Tensor x = testing::f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor w = testing::f32({1, 1, 2, 2}, {1, 1, 1, 1});
  std::vector<float> zeros(32, 0.0f), half_right(32, 0.0f);
  for (int c = 1; c < 8; c += 2)  // channels 2t + 1 hold tap t's x offset
    for (int p = 0; p < 4; ++p) half_right[static_cast<size_t>(c * 4 + p)] = 0.5f;
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 19]>
    g (float[1,1,3,3] x, float[1,1,2,2] w, float[1,8,2,2] off) => (float[1,1,2,2] z) { z = DeformConv(x, w, off) })";
  // Zero offsets: a plain convolution with a 2x2 box filter.
  testing::expect_tensor_near(
      testing::run_op(m, {{"x", x}, {"w", w}, {"off", testing::f32({1, 8, 2, 2}, zeros)}}),
      {1, 1, 2, 2}, {12, 16, 24, 28});
  // Every tap half a pixel right: the mean of two neighbours, a neighbour past the edge being 0.
  testing::expect_tensor_near(
      testing::run_op(m, {{"x", x}, {"w", w}, {"off", testing::f32({1, 8, 2, 2}, half_right)}}),
      {1, 1, 2, 2}, {14, 12.5, 26, 21.5});
  auto masked =
      testing::run_op(R"(<ir_version: 8, opset_import: ["" : 22]>
    g (float[1,1,3,3] x, float[1,1,2,2] w, float[1,8,2,2] off, float[1] b, float[1,4,2,2] mask) => (float[1,1,2,2] z) { z = DeformConv(x, w, off, b, mask) })",
                      {{"x", x},
                       {"w", w},
                       {"off", testing::f32({1, 8, 2, 2}, zeros)},
                       {"b", testing::f32({1}, {1})},
                       {"mask", testing::f32({1, 4, 2, 2}, std::vector<float>(16, 0.5f))}});
  testing::expect_tensor_near(masked, {1, 1, 2, 2}, {7, 9, 13, 15});
  auto err = testing::run_op_error(
      R"(<ir_version: 8, opset_import: ["" : 19]>
    g (float[1,1,3,3] x, float[1,1,2,2] w, float[1,4,2,2] off) => (float[1,1,2,2] z) { z = DeformConv(x, w, off) })",
      {{"x", x}, {"w", w}, {"off", testing::f32({1, 4, 2, 2}, std::vector<float>(16, 0))}});
  EXPECT_NE(err.find("offset has shape 1x4x2x2, expected 1x8x2x2"), std::string::npos) << err;
}

}  // namespace
}  // namespace onnxdbg
