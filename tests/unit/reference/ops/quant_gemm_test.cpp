// The quantized kernels' fast paths (reference/ops/integer_gemm.h: ConvInteger, QLinearConv,
// MatMulInteger and QLinearMatMul through the 8-bit AMX and AVX-512 VNNI kernels, the int16 AVX2
// kernels and float/double GEMM, each kernel the CPU has in turn) against straightforward int64
// loops on random data: int8/uint8 combinations, per-channel/per-row/per-column zero points, groups
// and depthwise, pads, strides, dilations, auto_pad, 1-D to 3-D, several bands and partial tiles,
// batch broadcasting, and sums that float could not hold exactly (the exactness guard's double
// path).
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "model/model.h"
#include "op_test_util.h"
#include "reference/interpreter.h"
#include "reference/ops/integer_gemm.h"

namespace onnxdbg::testing {
namespace {

// Runs `body` once per kernel this CPU has (the 8-bit AMX and VNNI kernels, the int16 AVX2 kernels
// and the float/double BLAS paths that CPUs without AVX2 take), each time capping the choice there.
template <class F>
void on_every_kernel(F body) {
  for (reference::IntegerKernel kernel : reference::integer_kernels_available()) {
    SCOPED_TRACE(reference::integer_kernel_name(kernel));
    reference::set_integer_kernel_limit(kernel);
    EXPECT_EQ(reference::integer_kernel(), kernel);
    body();
  }
  reference::set_integer_kernel_limit(reference::IntegerKernel::kAmx);
}

// A random uint8 or int8 tensor (values over the whole range) and its values as int64.
struct IntTensor {
  Tensor t;
  std::vector<int64_t> v;
};

IntTensor random_8bit(std::mt19937& rng, bool is_signed, const Shape& shape) {
  std::uniform_int_distribution<int> dist(is_signed ? -128 : 0, is_signed ? 127 : 255);
  IntTensor r;
  auto made = Tensor::make(is_signed ? DType::kInt8 : DType::kUint8, shape);
  EXPECT_TRUE(made.has_value());
  r.t = std::move(*made);
  for (int64_t i = 0; i < count_of(shape); ++i) {
    r.v.push_back(dist(rng));
    r.t.set_from_double(i, static_cast<double>(r.v.back()));
  }
  return r;
}

const char* type_name(bool is_signed) { return is_signed ? "int8" : "uint8"; }

struct ConvCase {
  Shape x;  // N, C, D1, ...
  int64_t m = 1, group = 1;
  Shape kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad;                    // "" for explicit pads
  bool x_signed = false, w_signed = true, per_channel = false;
};

// Output size and begin padding per spatial dim, as the ONNX Conv spec defines them.
void conv_geometry(const ConvCase& c, Shape& out, std::vector<int64_t>& begin) {
  const size_t nd = c.kernel.size();
  out.assign(nd, 0);
  begin.assign(nd, 0);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t in = c.x[d + 2], ext = (c.kernel[d] - 1) * c.dilations[d] + 1, s = c.strides[d];
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      out[d] = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out[d] - 1) * s + ext - in);
      begin[d] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (c.auto_pad == "VALID") {
      out[d] = (in - ext) / s + 1;
    } else {
      begin[d] = c.pads[d];
      out[d] = (in + c.pads[d] + c.pads[d + nd] - ext) / s + 1;
    }
  }
}

// The int64 sums of the convolution of (x - xz) with (w - wz[m]), [N, M, out...].
std::vector<int64_t> naive_conv(const ConvCase& c, const std::vector<int64_t>& x,
                                const std::vector<int64_t>& w, int64_t xz,
                                const std::vector<int64_t>& wz, Shape& out) {
  std::vector<int64_t> begin;
  conv_geometry(c, out, begin);
  const size_t nd = c.kernel.size();
  const int64_t n = c.x[0], ch = c.x[1], cg = ch / c.group, mg = c.m / c.group;
  const int64_t p = count_of(out), ks = count_of(c.kernel);
  const Shape in(c.x.begin() + 2, c.x.end());
  std::vector<int64_t> y(static_cast<size_t>(n * c.m * p), 0);
  std::vector<int64_t> oi(nd), ki(nd);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t m = 0; m < c.m; ++m)
      for (int64_t o = 0; o < p; ++o) {
        for (size_t d = nd, r = static_cast<size_t>(o); d-- > 0;) {
          oi[d] = static_cast<int64_t>(r) % out[d];
          r /= static_cast<size_t>(out[d]);
        }
        int64_t acc = 0;
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t kk = 0; kk < ks; ++kk) {
            for (size_t d = nd, r = static_cast<size_t>(kk); d-- > 0;) {
              ki[d] = static_cast<int64_t>(r) % c.kernel[d];
              r /= static_cast<size_t>(c.kernel[d]);
            }
            int64_t off = 0;
            bool inside = true;
            for (size_t d = 0; d < nd; ++d) {
              const int64_t pos = oi[d] * c.strides[d] - begin[d] + ki[d] * c.dilations[d];
              inside = inside && pos >= 0 && pos < in[d];
              off = off * in[d] + pos;
            }
            if (!inside) continue;
            const int64_t cin = (m / mg) * cg + ci;
            const int64_t xv = x[static_cast<size_t>((b * ch + cin) * count_of(in) + off)];
            const int64_t wv = w[static_cast<size_t>((m * cg + ci) * ks + kk)];
            acc += (xv - xz) * (wv - wz[static_cast<size_t>(m)]);
          }
        y[static_cast<size_t>((b * c.m + m) * p + o)] = acc;
      }
  return y;
}

std::string conv_attrs(const ConvCase& c) {
  std::string a = "<kernel_shape=" + ints_text(c.kernel) + ", strides=" + ints_text(c.strides) +
                  ", dilations=" + ints_text(c.dilations) + ", group=" + std::to_string(c.group);
  if (c.auto_pad.empty())
    a += ", pads=" + ints_text(c.pads);
  else
    a += ", auto_pad=\"" + c.auto_pad + "\"";
  return a + ">";
}

// Random convolution cases covering the options the kernels take.
std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> cases;
  const auto add = [&](ConvCase c) { cases.push_back(std::move(c)); };
  // Plain 3x3 with padding, every signedness combination, per-tensor and per-channel w zero.
  for (bool xs : {false, true})
    for (bool ws : {false, true})
      for (bool pc : {false, true})
        add({{1, 3, 7, 6}, 4, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", xs, ws, pc});
  add({{2, 4, 9, 8}, 6, 2, {3, 3}, {2, 1}, {1, 1}, {1, 0, 2, 1}, "", false, true, true});
  add({{1, 6, 8, 8}, 6, 6, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", false, true, true});
  add({{1, 4, 9, 9}, 8, 4, {3, 3}, {2, 2}, {2, 2}, {2, 2, 2, 2}, "", true, true, false});
  add({{1, 5, 6, 7}, 3, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, "", false, false, true});
  // Pointwise convs read x as their column matrix: two images, groups and two bands of rows; a
  // strided 1x1 is not pointwise.
  add({{2, 4, 40, 40}, 8, 2, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, "", true, true, true});
  add({{1, 4, 9, 11}, 5, 1, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}, "", false, true, false});
  // K = 64 * 9 = 576: two of the AMX kernel's passes over K.
  add({{1, 64, 6, 5}, 8, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", false, true, true});
  // Stride 2 over rows wide enough for im2col's 16-byte gather of even bytes, and its tail.
  add({{1, 3, 7, 75}, 4, 1, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, "", false, true, true});
  add({{1, 2, 6, 66}, 4, 1, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, "", true, false, false});
  // Two bands of output rows, 13 output channels (two full row tiles and one of 1), even K.
  add({{1, 2, 70, 70}, 13, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", false, true, true});
  // 40 output channels and K = 8 * 9 = 72: every tile of the AMX kernel's 32 x 32 blocks, and a
  // second, partial 64-byte chunk of K; grouped, with rows of one group beside another's.
  add({{1, 8, 11, 9}, 40, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", true, true, true});
  add({{1, 16, 9, 9}, 40, 2, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, "", false, false, true});
  add({{1, 3, 10, 9}, 4, 1, {3, 2}, {2, 3}, {1, 2}, {}, "SAME_UPPER", false, true, false});
  add({{1, 3, 10, 9}, 4, 1, {3, 2}, {2, 3}, {1, 2}, {}, "SAME_LOWER", true, false, true});
  add({{1, 3, 10, 9}, 4, 1, {3, 3}, {2, 2}, {1, 1}, {}, "VALID", false, true, true});
  add({{2, 4, 17}, 4, 2, {5}, {2}, {2}, {3, 1}, "", false, true, true});
  add({{1, 3, 12}, 3, 3, {3}, {1}, {1}, {1, 1}, "", true, true, false});
  add({{1, 2, 5, 4, 6},
       3,
       1,
       {3, 2, 3},
       {1, 2, 1},
       {1, 1, 2},
       {1, 0, 1, 1, 1, 2},
       "",
       false,
       true,
       true});
  return cases;
}

TEST(QuantGemm, ConvIntegerMatchesLoop) {
  on_every_kernel([] {
    std::mt19937 rng(7);
    for (const ConvCase& c : conv_cases()) {
      Shape wshape{c.m, c.x[1] / c.group};
      wshape.insert(wshape.end(), c.kernel.begin(), c.kernel.end());
      const IntTensor x = random_8bit(rng, c.x_signed, c.x),
                      w = random_8bit(rng, c.w_signed, wshape);
      const IntTensor xz = random_8bit(rng, c.x_signed, {}),
                      wz = random_8bit(rng, c.w_signed, {c.per_channel ? c.m : 1});
      std::vector<int64_t> wzs(static_cast<size_t>(c.m), wz.v[0]);
      if (c.per_channel) wzs = wz.v;
      Shape out;
      const auto expect = naive_conv(c, x.v, w.v, xz.v[0], wzs, out);
      Shape yshape{c.x[0], c.m};
      yshape.insert(yshape.end(), out.begin(), out.end());
      const std::string text = std::string(R"(<ir_version: 8, opset_import: ["" : 10]>
g ()") + type_name(c.x_signed) +
                               ints_text(c.x) + " x, " + type_name(c.w_signed) + ints_text(wshape) +
                               " w, " + type_name(c.x_signed) + " xz, " + type_name(c.w_signed) +
                               ints_text(wz.t.shape()) + " wz) => (int32" + ints_text(yshape) +
                               " z) { z = ConvInteger" + conv_attrs(c) + "(x, w, xz, wz) }";
      const Tensor z = run_op(text, {{"x", x.t}, {"w", w.t}, {"xz", xz.t}, {"wz", wz.t}});
      ASSERT_EQ(z.shape(), yshape) << text;
      ASSERT_EQ(z.dtype(), DType::kInt32);
      for (int64_t i = 0; i < z.numel(); ++i)
        ASSERT_EQ(z.data<int32_t>()[i], expect[static_cast<size_t>(i)]) << text << " at " << i;
    }
  });
}

// saturate(round_half_even(v) + zero) to uint8 or int8, as QLinearConv/QLinearMatMul define it.
double requantize(double v, double zero, bool is_signed) {
  const double lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  return std::clamp(std::nearbyint(std::nearbyint(v) + zero), lo, hi);
}

TEST(QuantGemm, QLinearConvMatchesLoop) {
  on_every_kernel([] {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> scale(0.001f, 0.05f);
    std::uniform_int_distribution<int32_t> bias_dist(-5000, 5000);
    for (const ConvCase& c : conv_cases()) {
      Shape wshape{c.m, c.x[1] / c.group};
      wshape.insert(wshape.end(), c.kernel.begin(), c.kernel.end());
      const IntTensor x = random_8bit(rng, c.x_signed, c.x),
                      w = random_8bit(rng, c.w_signed, wshape);
      const IntTensor xz = random_8bit(rng, c.x_signed, {}),
                      wz = random_8bit(rng, c.w_signed, {c.per_channel ? c.m : 1});
      const IntTensor yz = random_8bit(rng, c.x_signed, {});
      const int64_t nws = c.per_channel ? c.m : 1;
      std::vector<float> ws(static_cast<size_t>(nws));
      for (float& s : ws) s = scale(rng);
      std::vector<int32_t> bias(static_cast<size_t>(c.m));
      for (int32_t& b : bias) b = bias_dist(rng);
      const float xs = scale(rng), ys = scale(rng) * 20;
      std::vector<int64_t> wzs(static_cast<size_t>(c.m), wz.v[0]);
      if (c.per_channel) wzs = wz.v;
      Shape out;
      const auto acc = naive_conv(c, x.v, w.v, xz.v[0], wzs, out);
      Shape yshape{c.x[0], c.m};
      yshape.insert(yshape.end(), out.begin(), out.end());
      const std::string xt = type_name(c.x_signed), wt = type_name(c.w_signed);
      const std::string text = R"(<ir_version: 8, opset_import: ["" : 10]>
g ()" + xt + ints_text(c.x) + " x, float xs, " +
                               xt + " xz, " + wt + ints_text(wshape) + " w, float" +
                               ints_text({nws}) + " ws, " + wt + ints_text({nws}) +
                               " wz, float ys, " + xt + " yz, int32" + ints_text({c.m}) +
                               " b) => (" + xt + ints_text(yshape) + " z) { z = QLinearConv" +
                               conv_attrs(c) + "(x, xs, xz, w, ws, wz, ys, yz, b) }";
      const Tensor z = run_op(text, {{"x", x.t},
                                     {"xs", Tensor::scalar<float>(xs)},
                                     {"xz", xz.t},
                                     {"w", w.t},
                                     {"ws", f32({nws}, ws)},
                                     {"wz", wz.t},
                                     {"ys", Tensor::scalar<float>(ys)},
                                     {"yz", yz.t},
                                     {"b", tensor<int32_t>({c.m}, bias)}});
      ASSERT_EQ(z.shape(), yshape) << text;
      const int64_t plane = count_of(out);
      for (int64_t i = 0; i < z.numel(); ++i) {
        const auto ch = static_cast<size_t>((i / plane) % c.m);
        const double v = (static_cast<double>(acc[static_cast<size_t>(i)]) + bias[ch]) *
                         (static_cast<double>(xs) * ws[c.per_channel ? ch : 0] / ys);
        ASSERT_EQ(z.get_as_double(i), requantize(v, static_cast<double>(yz.v[0]), c.x_signed))
            << text << " at " << i;
      }
    }
  });
}

struct MatMulCase {
  Shape a, b;
  bool a_signed = false, b_signed = true, per_row = false, per_col = false;
};

// The int64 sums of (A - az[row]) x (B - bz[col]) with numpy broadcasting of the batch dims
// (operands of rank >= 2 here), laid out as the output shape `out`.
std::vector<int64_t> naive_matmul(const MatMulCase& c, const std::vector<int64_t>& a,
                                  const std::vector<int64_t>& b, const std::vector<int64_t>& az,
                                  const std::vector<int64_t>& bz, Shape& out) {
  const int64_t m = c.a[c.a.size() - 2], k = c.a.back(), n = c.b.back();
  const size_t rank = std::max(c.a.size(), c.b.size());
  Shape ab(rank - 2, 1), bb(rank - 2, 1);
  std::copy(c.a.begin(), c.a.end() - 2, ab.end() - static_cast<std::ptrdiff_t>(c.a.size() - 2));
  std::copy(c.b.begin(), c.b.end() - 2, bb.end() - static_cast<std::ptrdiff_t>(c.b.size() - 2));
  out.clear();
  for (size_t d = 0; d < rank - 2; ++d) out.push_back(std::max(ab[d], bb[d]));
  const int64_t batches = count_of(out);
  out.push_back(m);
  out.push_back(n);
  std::vector<int64_t> y;
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t ao = 0, bo = 0;
    for (size_t d = 0, r = static_cast<size_t>(bi); d < rank - 2; ++d) {
      int64_t stride = 1;
      for (size_t e = d + 1; e < rank - 2; ++e) stride *= out[e];
      const int64_t idx = static_cast<int64_t>(r) / stride;
      r %= static_cast<size_t>(stride);
      ao = ao * ab[d] + (ab[d] == 1 ? 0 : idx);
      bo = bo * bb[d] + (bb[d] == 1 ? 0 : idx);
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc += (a[static_cast<size_t>((ao * m + i) * k + kk)] - az[static_cast<size_t>(i)]) *
                 (b[static_cast<size_t>((bo * k + kk) * n + j)] - bz[static_cast<size_t>(j)]);
        y.push_back(acc);
      }
  }
  return y;
}

std::vector<MatMulCase> matmul_cases() {
  std::vector<MatMulCase> cases;
  for (bool as : {false, true})
    for (bool bs : {false, true}) cases.push_back({{5, 7}, {7, 4}, as, bs, false, false});
  cases.push_back({{3, 5, 9}, {9, 6}, false, true, true, true});
  cases.push_back({{2, 1, 4, 8}, {3, 8, 5}, true, false, true, false});
  cases.push_back({{4, 6}, {2, 6, 3}, false, false, false, true});
  cases.push_back({{1, 300}, {300, 2}, false, true, false, true});
  // Several row and column tiles of the int16 kernel, and more than one block of columns.
  cases.push_back({{14, 33}, {33, 40}, false, true, true, true});
  cases.push_back({{2, 3, 10}, {2, 10, 300}, true, true, false, true});
  // The AMX kernel's 32 x 32 blocks: two blocks of rows (the second partial), a partial second
  // strip, and K over one 64-byte tile (two chunks, the second partial); and a batched B.
  for (bool as : {false, true})
    for (bool bs : {false, true}) cases.push_back({{45, 70}, {70, 50}, as, bs, true, true});
  cases.push_back({{2, 40, 130}, {2, 130, 33}, false, true, true, true});
  // K of 600: the AMX kernel's two passes over K (512 bytes, then 88 padded to 128).
  cases.push_back({{40, 600}, {600, 45}, true, false, true, false});
  return cases;
}

std::vector<int64_t> zero_values(const IntTensor& zp, int64_t count) {
  return zp.v.size() == 1 ? std::vector<int64_t>(static_cast<size_t>(count), zp.v[0]) : zp.v;
}

TEST(QuantGemm, MatMulIntegerMatchesLoop) {
  on_every_kernel([] {
    std::mt19937 rng(3);
    for (const MatMulCase& c : matmul_cases()) {
      const int64_t m = c.a[c.a.size() - 2], n = c.b.back();
      const IntTensor a = random_8bit(rng, c.a_signed, c.a), b = random_8bit(rng, c.b_signed, c.b);
      const IntTensor az = random_8bit(rng, c.a_signed, {c.per_row ? m : 1}),
                      bz = random_8bit(rng, c.b_signed, {c.per_col ? n : 1});
      Shape out;
      const auto expect = naive_matmul(c, a.v, b.v, zero_values(az, m), zero_values(bz, n), out);
      const std::string text = std::string(R"(<ir_version: 8, opset_import: ["" : 10]>
g ()") + type_name(c.a_signed) +
                               ints_text(c.a) + " a, " + type_name(c.b_signed) + ints_text(c.b) +
                               " b, " + type_name(c.a_signed) + ints_text(az.t.shape()) + " az, " +
                               type_name(c.b_signed) + ints_text(bz.t.shape()) + " bz) => (int32" +
                               ints_text(out) + " z) { z = MatMulInteger(a, b, az, bz) }";
      const Tensor z = run_op(text, {{"a", a.t}, {"b", b.t}, {"az", az.t}, {"bz", bz.t}});
      ASSERT_EQ(z.shape(), out) << text;
      for (int64_t i = 0; i < z.numel(); ++i)
        ASSERT_EQ(z.data<int32_t>()[i], expect[static_cast<size_t>(i)]) << text << " at " << i;
    }
  });
}

TEST(QuantGemm, QLinearMatMulMatchesLoop) {
  on_every_kernel([] {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> scale(0.001f, 0.05f);
    for (const MatMulCase& c : matmul_cases()) {
      const int64_t m = c.a[c.a.size() - 2], n = c.b.back();
      const IntTensor a = random_8bit(rng, c.a_signed, c.a), b = random_8bit(rng, c.b_signed, c.b);
      const IntTensor az = random_8bit(rng, c.a_signed, {c.per_row ? m : 1}),
                      bz = random_8bit(rng, c.b_signed, {c.per_col ? n : 1}),
                      yz = random_8bit(rng, c.a_signed, {});
      std::vector<float> as(static_cast<size_t>(c.per_row ? m : 1)),
          bs(static_cast<size_t>(c.per_col ? n : 1));
      for (float& s : as) s = scale(rng);
      for (float& s : bs) s = scale(rng);
      const float ys = scale(rng) * 10;
      Shape out;
      const auto acc = naive_matmul(c, a.v, b.v, zero_values(az, m), zero_values(bz, n), out);
      const std::string at = type_name(c.a_signed), bt = type_name(c.b_signed);
      const std::string text = R"(<ir_version: 8, opset_import: ["" : 10]>
g ()" + at + ints_text(c.a) + " a, float" +
                               ints_text(az.t.shape()) + " as, " + at + ints_text(az.t.shape()) +
                               " az, " + bt + ints_text(c.b) + " b, float" +
                               ints_text(bz.t.shape()) + " bs, " + bt + ints_text(bz.t.shape()) +
                               " bz, float ys, " + at + " yz) => (" + at + ints_text(out) +
                               " z) { z = QLinearMatMul(a, as, az, b, bs, bz, ys, yz) }";
      const Tensor z = run_op(text, {{"a", a.t},
                                     {"as", f32(az.t.shape(), as)},
                                     {"az", az.t},
                                     {"b", b.t},
                                     {"bs", f32(bz.t.shape(), bs)},
                                     {"bz", bz.t},
                                     {"ys", Tensor::scalar<float>(ys)},
                                     {"yz", yz.t}});
      ASSERT_EQ(z.shape(), out) << text;
      for (int64_t i = 0; i < z.numel(); ++i) {
        const auto r = static_cast<size_t>((i / n) % m), col = static_cast<size_t>(i % n);
        const double v = static_cast<double>(acc[static_cast<size_t>(i)]) * as[c.per_row ? r : 0] *
                         bs[c.per_col ? col : 0] / ys;
        ASSERT_EQ(z.get_as_double(i), requantize(v, static_cast<double>(yz.v[0]), c.a_signed))
            << text << " at " << i;
      }
    }
  });
}

// Sums whose partial sums pass 2^24 and whose value is odd: float holds no odd integer above
// 2^24, so only the guard's double path gives them exactly.
TEST(QuantGemm, SumsBeyondFloatPrecisionAreExact) {
  on_every_kernel([] {
    // MatMulInteger: 4096 terms of 255 * 127, one of them 255 * 126: 4096 * 32385 - 255.
    const int64_t k = 4096;
    std::vector<uint8_t> a(k, 255);
    std::vector<int8_t> b(k, 127);
    b[1234] = 126;
    auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (uint8[1,4096] a, int8[4096,1] b) => (int32[1,1] z) { z = MatMulInteger(a, b) })",
                    {{"a", tensor<uint8_t>({1, k}, a)}, {"b", tensor<int8_t>({k, 1}, b)}});
    ASSERT_EQ(z.numel(), 1);
    EXPECT_EQ(z.data<int32_t>()[0], k * 32385 - 255);
    // ConvInteger: 512 channels x 3x3 = 4608 terms per output, one w of 126, with padding.
    const int64_t c = 512;
    std::vector<uint8_t> x(static_cast<size_t>(c * 9), 255);
    std::vector<int8_t> w(static_cast<size_t>(c * 9), 127);
    w[777] = 126;
    auto y =
        run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (uint8[1,512,3,3] x, int8[1,512,3,3] w) => (int32[1,1,3,3] z) {
  z = ConvInteger<pads=[1,1,1,1]>(x, w)
})",
               {{"x", tensor<uint8_t>({1, c, 3, 3}, x)}, {"w", tensor<int8_t>({1, c, 3, 3}, w)}});
    ASSERT_EQ(y.numel(), 9);
    // The centre sees every tap.
    EXPECT_EQ(y.data<int32_t>()[4], c * 9 * 32385 - 255);
  });
}

// A sum beyond the int32 range wraps as an int32 accumulator does (ONNX Runtime's behaviour);
// for ConvInteger the bound past 2^31 also moves the work from the int16 kernel to double GEMM.
TEST(QuantGemm, Int32OverflowWraps) {
  on_every_kernel([] {
    const int64_t c = 8192;
    std::vector<uint8_t> x(static_cast<size_t>(c * 9), 255);
    std::vector<int8_t> w(static_cast<size_t>(c * 9), 127);
    auto y =
        run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (uint8[1,8192,3,3] x, int8[1,8192,3,3] w) => (int32[1,1,1,1] z) { z = ConvInteger(x, w) })",
               {{"x", tensor<uint8_t>({1, c, 3, 3}, x)}, {"w", tensor<int8_t>({1, c, 3, 3}, w)}});
    ASSERT_EQ(y.numel(), 1);
    EXPECT_EQ(y.data<int32_t>()[0], static_cast<int32_t>(c * 9 * 32385 - (int64_t{1} << 32)));
    const int64_t k = 70000;
    std::vector<uint8_t> a(k, 255);
    std::vector<int8_t> b(k, 127);
    auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 10]>
g (uint8[1,70000] a, int8[70000,1] b) => (int32[1,1] z) { z = MatMulInteger(a, b) })",
                    {{"a", tensor<uint8_t>({1, k}, a)}, {"b", tensor<int8_t>({k, 1}, b)}});
    ASSERT_EQ(z.numel(), 1);
    EXPECT_EQ(z.data<int32_t>()[0], static_cast<int32_t>(k * 32385 - (int64_t{1} << 32)));
  });
}

// A constant B (an initializer) is packed on the first run and the pack kept for later runs
// (PackedB8, KernelStates): the sums equal the loop's on every run and every 8-bit kernel (a kept
// pack of another kernel is replaced), and a B that a graph input overrides is never taken from
// the pack.
TEST(QuantGemm, ConstantBIsPackedOnceAndKept) {
  std::mt19937 rng(11);
  const MatMulCase c{{45, 70}, {70, 50}, false, true, false, false};
  const IntTensor b = random_8bit(rng, true, c.b), other_b = random_8bit(rng, true, c.b);
  // b is an initializer that a graph input of the same name may override (IR version 4 and on).
  onnx::ModelProto model = parse_text_model(R"(<ir_version: 8, opset_import: ["" : 10]>
g (uint8[45,70] a, int8[70,50] b) => (int32[45,50] z) { z = MatMulInteger(a, b) })");
  *model.mutable_graph()->add_initializer() = tensor_to_proto(b.t, "b");
  auto interpreter = reference::Interpreter::create(model);
  ASSERT_TRUE(interpreter.has_value()) << interpreter.status().message();
  const auto check = [&](const IntTensor& a, const IntTensor& bm, bool feed_b) {
    Shape out;
    const auto expect =
        naive_matmul(c, a.v, bm.v, std::vector<int64_t>(45, 0), std::vector<int64_t>(50, 0), out);
    std::map<std::string, Tensor> feeds{{"a", a.t}};
    if (feed_b) feeds["b"] = bm.t;
    auto z = (*interpreter)->run(feeds);
    ASSERT_TRUE(z.has_value()) << z.status().message();
    const Tensor& zt = z->at("z");
    ASSERT_EQ(zt.shape(), out);
    for (int64_t i = 0; i < zt.numel(); ++i)
      ASSERT_EQ(zt.data<int32_t>()[i], expect[static_cast<size_t>(i)]) << "at " << i;
  };
  on_every_kernel([&] {
    const bool packs = reference::integer_kernel() >= reference::IntegerKernel::kVnni512;
    for (int run = 0; run < 3; ++run) {
      SCOPED_TRACE("run " + std::to_string(run));
      check(random_8bit(rng, false, c.a), b, false);
      EXPECT_EQ((*interpreter)->kernel_state_bytes() > 0, packs);
      check(random_8bit(rng, false, c.a), other_b, true);
    }
  });
}

}  // namespace
}  // namespace onnxdbg::testing
