// Conv's float16 path (reference/ops/conv_direct.h) against a straightforward loop of what it
// documents: per output element, float32 fused multiply-adds over the taps in (input channel,
// kernel row, kernel column) order from 0, padding taps included, plus the bias, rounded once to
// float16. Bit for bit, on every instruction set the CPU has, over strides, dilations, explicit,
// asymmetric and SAME pads, groups, 1-D, tails of column and channel tiles and batches; the
// float16 forms it leaves to the float32 path (depthwise, 3-D) and bfloat16 against the same
// loop's float64 sums; and float16 Relu against the float32 round trip for all 65,536 patterns.
#include "reference/ops/conv_direct.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "op_test_util.h"

namespace onnxdbg::testing {
namespace {

struct HalfConvCase {
  Shape x;  // N, C, spatial...
  int64_t m = 1, group = 1;
  Shape kernel;
  std::vector<int64_t> strides, dilations, pads;  // empty: the defaults
  std::string auto_pad;                           // empty: NOTSET
  bool bias = true;
};

HalfConvCase hc(Shape x, int64_t m, int64_t group, Shape kernel, std::vector<int64_t> strides = {},
                std::vector<int64_t> dilations = {}, std::vector<int64_t> pads = {},
                std::string auto_pad = "", bool bias = true) {
  return {std::move(x),
          m,
          group,
          std::move(kernel),
          std::move(strides),
          std::move(dilations),
          std::move(pads),
          std::move(auto_pad),
          bias};
}

// The spatial geometry the ONNX spec gives the case: output size and begin pads per dim.
void geometry(const HalfConvCase& c, Shape& out, std::vector<int64_t>& begin) {
  const size_t nd = c.kernel.size();
  out.assign(nd, 0);
  begin.assign(nd, 0);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t s = c.strides.empty() ? 1 : c.strides[d];
    const int64_t dil = c.dilations.empty() ? 1 : c.dilations[d];
    const int64_t ext = (c.kernel[d] - 1) * dil + 1, in = c.x[d + 2];
    if (c.auto_pad == "SAME_UPPER") {
      out[d] = (in + s - 1) / s;
      begin[d] = std::max<int64_t>(0, (out[d] - 1) * s + ext - in) / 2;
      continue;
    }
    const int64_t pb = c.pads.empty() ? 0 : c.pads[d], pe = c.pads.empty() ? 0 : c.pads[d + nd];
    begin[d] = pb;
    out[d] = (in + pb + pe - ext) / s + 1;
  }
}

// The documented float16 semantics, one element at a time: float32 fused multiply-adds in tap
// order from 0 (padding reads 0), plus the bias (the caller rounds to float16).
std::vector<float> naive_half_conv(const HalfConvCase& c, const std::vector<float>& x,
                                   const std::vector<float>& w, const std::vector<float>& b,
                                   Shape& out) {
  std::vector<int64_t> begin;
  geometry(c, out, begin);
  const size_t nd = c.kernel.size();
  // Everything as 2-D: a missing first dim has size 1.
  auto at = [&](const std::vector<int64_t>& v, size_t d, int64_t def) {
    return nd == 2 ? v[d] : (d == 0 ? def : v[0]);
  };
  const int64_t n = c.x[0], ch = c.x[1], cg = ch / c.group, mg = c.m / c.group;
  const int64_t h = at(Shape(c.x.begin() + 2, c.x.end()), 0, 1),
                wd = at(Shape(c.x.begin() + 2, c.x.end()), 1, 1);
  const int64_t kh = at(c.kernel, 0, 1), kw = at(c.kernel, 1, 1);
  const int64_t oh = at(out, 0, 1), ow = at(out, 1, 1);
  const std::vector<int64_t> ones(nd, 1);
  const auto& st = c.strides.empty() ? ones : c.strides;
  const auto& dl = c.dilations.empty() ? ones : c.dilations;
  const int64_t sh = at(st, 0, 1), sw = at(st, 1, 1), dh = at(dl, 0, 1), dw = at(dl, 1, 1);
  const int64_t ph = at(begin, 0, 0), pw = at(begin, 1, 0);
  std::vector<float> y;
  for (int64_t img = 0; img < n; ++img)
    for (int64_t mo = 0; mo < c.m; ++mo)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t j = 0; j < ow; ++j) {
          float acc = 0.0f;
          const int64_t gi = mo / mg;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ki = 0; ki < kh; ++ki)
              for (int64_t kj = 0; kj < kw; ++kj) {
                const int64_t iy = r * sh - ph + ki * dh, ix = j * sw - pw + kj * dw;
                const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < wd;
                const float xv =
                    inside ? x[static_cast<size_t>(((img * ch + gi * cg + ci) * h + iy) * wd + ix)]
                           : 0.0f;
                const float wv = w[static_cast<size_t>(((mo * cg + ci) * kh + ki) * kw + kj)];
                acc = std::fma(wv, xv, acc);
              }
          y.push_back(b.empty() ? acc : acc + b[static_cast<size_t>(mo)]);
        }
  return y;
}

std::vector<float> random_conv_halves(std::mt19937& rng, int64_t n, float scale) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(Float16(dist(rng))));
  return v;
}

std::string conv_text(const HalfConvCase& c, const Shape& wshape, const Shape& yshape,
                      const std::string& type) {
  std::string attrs =
      "<kernel_shape = " + ints_text(c.kernel) + ", group = " + std::to_string(c.group);
  if (!c.strides.empty()) attrs += ", strides = " + ints_text(c.strides);
  if (!c.dilations.empty()) attrs += ", dilations = " + ints_text(c.dilations);
  if (!c.pads.empty()) attrs += ", pads = " + ints_text(c.pads);
  if (!c.auto_pad.empty()) attrs += ", auto_pad = \"" + c.auto_pad + "\"";
  attrs += ">";
  return "<ir_version: 8, opset_import: [\"\" : 13]>\ng (" + type + ints_text(c.x) + " x, " + type +
         ints_text(wshape) + " w" +
         (c.bias ? ", " + type + "[" + std::to_string(c.m) + "] b" : "") + ") => (" + type +
         ints_text(yshape) + " z) { z = Conv" + attrs + "(x, w" + (c.bias ? ", b" : "") + ") }";
}

// Runs case c in float16 and compares with the naive loop, bit for bit.
void check_case(const HalfConvCase& c, std::mt19937& rng) {
  Shape wshape{c.m, c.x[1] / c.group};
  wshape.insert(wshape.end(), c.kernel.begin(), c.kernel.end());
  const auto x = random_conv_halves(rng, count_of(c.x), 1.0f);
  const auto w = random_conv_halves(rng, count_of(wshape), 0.3f);
  const auto b = c.bias ? random_conv_halves(rng, c.m, 0.5f) : std::vector<float>{};
  Shape out;
  const auto expect = naive_half_conv(c, x, w, b, out);
  Shape yshape{c.x[0], c.m};
  yshape.insert(yshape.end(), out.begin(), out.end());
  std::map<std::string, Tensor> feeds{{"x", f16(c.x, x)}, {"w", f16(wshape, w)}};
  if (c.bias) feeds["b"] = f16({c.m}, b);
  const std::string text = conv_text(c, wshape, yshape, "float16");
  const Tensor z = run_op(text, feeds);
  ASSERT_EQ(z.shape(), yshape) << text;
  ASSERT_EQ(z.dtype(), DType::kFloat16) << text;
  for (int64_t i = 0; i < z.numel(); ++i) {
    const float e = expect[static_cast<size_t>(i)];
    ASSERT_EQ(z.data<Float16>()[i].bits, Float16(e).bits)
        << text << " at " << i << ": " << static_cast<float>(z.data<Float16>()[i]) << " vs " << e;
  }
}

const std::vector<HalfConvCase>& direct_cases() {
  static const std::vector<HalfConvCase> cases = {
      hc({1, 3, 9, 11}, 5, 1, {3, 3}, {}, {}, {1, 1, 1, 1}),
      hc({2, 4, 13, 70}, 11, 1, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}),     // tails of both tiles
      hc({1, 6, 17, 40}, 9, 1, {3, 3}, {2, 2}, {}, {1, 0, 0, 1}),      // strided, asymmetric pads
      hc({1, 4, 15, 37}, 7, 1, {3, 3}, {3, 3}, {2, 2}, {2, 2, 2, 2}),  // stride 3, dilation 2
      hc({1, 6, 8, 33}, 8, 2, {3, 5}, {1, 2}, {1, 1}, {}, "SAME_UPPER"),  // groups, rectangular
      hc({1, 16, 10, 10}, 16, 1, {1, 1}, {}, {}, {}, "", false),          // pointwise, no bias
      hc({1, 8, 11, 12}, 24, 1, {1, 1}, {2, 2}),                          // strided pointwise
      hc({2, 3, 50}, 10, 1, {5}, {2}, {1}, {2, 2}),                       // 1-D
      hc({1, 6, 1, 90}, 6, 3, {1, 7}, {1, 4}, {1, 3}, {0, 3, 0, 3}),      // stride 4, grouped
      // Many input channels (taps from far apart in the padded rows): plain, strided without a
      // bias, and two dilated groups of 50.
      hc({1, 96, 6, 21}, 10, 1, {3, 3}, {}, {}, {1, 1, 1, 1}),
      hc({1, 50, 7, 33}, 9, 1, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, "", false),
      hc({1, 100, 5, 9}, 18, 2, {3, 3}, {}, {2, 2}, {2, 2, 2, 2}),
  };
  return cases;
}

TEST(ConvFloat16, DirectMatchesTheDocumentedSumsOnEveryIsa) {
  for (reference::DirectConvIsa isa : reference::direct_conv_isas_available()) {
    SCOPED_TRACE(reference::direct_conv_isa_name(isa));
    reference::set_direct_conv_isa_limit(isa);
    std::mt19937 rng(11);
    for (const HalfConvCase& c : direct_cases()) {
      ASSERT_NO_FATAL_FAILURE(check_case(c, rng));
    }
  }
  reference::set_direct_conv_isa_limit(reference::DirectConvIsa::kAvx512);
}

// Runs case c in `type` ("float16" or "bfloat16") and in float32 on the same values: the half
// result must be the float32 one rounded once to the type.
void check_conv_against_float32(const HalfConvCase& c, std::mt19937& rng, const std::string& type) {
  Shape wshape{c.m, c.x[1] / c.group};
  wshape.insert(wshape.end(), c.kernel.begin(), c.kernel.end());
  const bool bf = type == "bfloat16";
  std::map<std::string, Tensor> half, full;
  auto add = [&](const std::string& name, const Shape& s, float scale) {
    auto v = random_conv_halves(rng, count_of(s), scale);
    if (bf) {
      std::vector<BFloat16> h;
      for (float& f : v) h.emplace_back(f), f = static_cast<float>(h.back());
      half[name] = tensor<BFloat16>(s, h);
    } else {
      half[name] = f16(s, v);
    }
    full[name] = f32(s, v);
  };
  add("x", c.x, 1.0f);
  add("w", wshape, 0.3f);
  if (c.bias) add("b", {c.m}, 0.5f);
  Shape out;
  std::vector<int64_t> begin;
  if (c.kernel.size() <= 2) {
    geometry(c, out, begin);
  } else {  // explicit pads of 1 and stride 1 (the 3-D case below)
    out = Shape(c.x.begin() + 2, c.x.end());
  }
  Shape yshape{c.x[0], c.m};
  yshape.insert(yshape.end(), out.begin(), out.end());
  const Tensor zh = run_op(conv_text(c, wshape, yshape, type), half);
  const Tensor zf = run_op(conv_text(c, wshape, yshape, "float"), full);
  ASSERT_EQ(zh.shape(), zf.shape());
  ASSERT_EQ(zh.dtype(), bf ? DType::kBFloat16 : DType::kFloat16);
  for (int64_t i = 0; i < zh.numel(); ++i) {
    const float f = zf.data<float>()[i];
    const uint16_t got = bf ? zh.data<BFloat16>()[i].bits : zh.data<Float16>()[i].bits;
    ASSERT_EQ(got, bf ? BFloat16(f).bits : Float16(f).bits)
        << conv_text(c, wshape, yshape, type) << " at " << i;
  }
}

TEST(ConvFloat16, OtherFormsRunInFloat32AndRoundOnce) {
  std::mt19937 rng(12);
  // Depthwise, channel-multiplier, 3-D and too sparse float16 convolutions take the float32 path;
  // bfloat16 is upcast to float32 by the interpreter.
  const std::vector<HalfConvCase> cases = {
      hc({1, 8, 12, 12}, 8, 8, {3, 3}, {}, {}, {1, 1, 1, 1}),
      hc({1, 4, 12, 12}, 8, 4, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}),
      hc({1, 3, 5, 6, 7}, 4, 1, {3, 3, 3}, {}, {}, {1, 1, 1, 1, 1, 1}),
      hc({1, 2, 6, 40}, 3, 1, {1, 1}, {1, 5}),  // stride 5: too sparse for the padded copy
  };
  for (const HalfConvCase& c : cases)
    ASSERT_NO_FATAL_FAILURE(check_conv_against_float32(c, rng, "float16"));
  for (const HalfConvCase& c : direct_cases())
    ASSERT_NO_FATAL_FAILURE(check_conv_against_float32(c, rng, "bfloat16"));
}

TEST(ConvFloat16, DirectAppliesToDenseFirstTwoDims) {
  reference::SpatialGeometry g;
  g.in = {32, 32};
  g.kernel = {3, 3};
  g.strides = {1, 1};
  g.dilations = {1, 1};
  g.pads_begin = {1, 1};
  g.pads_end = {1, 1};
  g.out = {32, 32};
  EXPECT_TRUE(reference::conv_direct_applies(g, 16, 1));
  EXPECT_TRUE(reference::conv_direct_applies(g, 16, 2));
  EXPECT_FALSE(reference::conv_direct_applies(g, 16, 16));  // depthwise
  g.strides = {1, 5};
  EXPECT_FALSE(reference::conv_direct_applies(g, 16, 1));
  g.in = {4, 4, 4};
  g.strides = {1, 1, 1};
  EXPECT_FALSE(reference::conv_direct_applies(g, 16, 1));
}

TEST(ReluFloat16, EveryPatternAsTheFloat32RoundTrip) {
  std::vector<Float16> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i].bits = static_cast<uint16_t>(i);
  const Tensor z = run_op(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float16[65536] x) => (float16[65536] z) { z = Relu(x) })",
                          {{"x", tensor<Float16>({65536}, all)}});
  ASSERT_EQ(z.dtype(), DType::kFloat16);
  for (uint32_t i = 0; i < 65536; ++i) {
    const float f = Float16::to_float(static_cast<uint16_t>(i));
    const uint16_t expect = Float16::from_float(f < 0.0f ? 0.0f : f);
    ASSERT_EQ(z.data<Float16>()[i].bits, expect) << "pattern " << i;
  }
}

}  // namespace
}  // namespace onnxdbg::testing
