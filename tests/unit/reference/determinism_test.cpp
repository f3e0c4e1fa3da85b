// The reference interpreter's results are bit-for-bit reproducible: a small conv net (regular,
// depthwise and pointwise convs, BatchNormalization, HardSwish written out with per-channel and
// scalar broadcasts, nearest Resize) and, when fetched, the public PP-OCR classifier give the same
// bits from run to run and from one interpreter to another. Also checks the broadcast fast paths
// (for_each_broadcast_run) against the per-element walk, and the profiling option.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/reference/reference_backend.h"
#include "reference/kernel_util.h"
#include "reference/ops/blas.h"
#include "reference/parallel.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

using testing::same_bits;

using testing::parse_text_model;

Tensor pseudo_random(const Shape& shape, uint32_t seed) {
  Tensor t(DType::kFloat, shape);
  uint32_t s = seed;
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
  }
  return t;
}

// A conv net in the style of the PP-OCR models, with every initializer given as an input so the
// text stays short.
const char* kConvNet = R"(
<ir_version: 8, opset_import: ["" : 13]>
net (float[1,3,37,29] x, float[8,3,3,3] w1, float[8] b1, float[8,1,5,5] wd, float[8] s, float[8] bb,
     float[8] mu, float[8] var, float[16,8,1,1] wp, float[1,16,1,1] cb) => (float[1,16,38,30] y) {
  c1 = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (x, w1, b1)
  dw = Conv <group = 8, pads = [2, 2, 2, 2]> (c1, wd)
  bn = BatchNormalization (dw, s, bb, mu, var)
  k3 = Constant <value = float {3.0}> ()
  k6 = Constant <value = float {0.16666667}> ()
  r = Relu (bn)
  a3 = Add (r, k3)
  lo = Constant <value = float {0.0}> ()
  hi = Constant <value = float {6.0}> ()
  cl = Clip (a3, lo, hi)
  m = Mul (bn, cl)
  hs = Mul (m, k6)
  pw = Conv (hs, wp)
  pc = Add (pw, cb)
  sc = Constant <value = float[4] {1.0, 1.0, 2.0, 2.0}> ()
  y = Resize <mode = "nearest"> (pc, , sc)
}
)";

std::map<std::string, Tensor> conv_net_inputs() {
  return {{"x", pseudo_random({1, 3, 37, 29}, 1)},
          {"w1", pseudo_random({8, 3, 3, 3}, 2)},
          {"b1", pseudo_random({8}, 3)},
          {"wd", pseudo_random({8, 1, 5, 5}, 4)},
          {"s", pseudo_random({8}, 5)},
          {"bb", pseudo_random({8}, 6)},
          {"mu", pseudo_random({8}, 7)},
          {"var", Tensor::from_vector<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8})},
          {"wp", pseudo_random({16, 8, 1, 1}, 8)},
          {"cb", pseudo_random({1, 16, 1, 1}, 9)}};
}

TEST(Determinism, ConvNetGivesTheSameBitsEveryRun) {
  const auto model = parse_text_model(kConvNet);
  const auto inputs = conv_net_inputs();
  auto a = reference::Interpreter::create(model);
  auto b = reference::Interpreter::create(model);
  ASSERT_TRUE(a.has_value() && b.has_value());
  auto first = (*a)->run(inputs);
  ASSERT_TRUE(first.has_value()) << first.status().to_string();
  const Tensor& y = first->at("y");
  ASSERT_EQ(y.shape(), (Shape{1, 16, 38, 30}));
  for (int i = 0; i < 3; ++i) {
    auto again = (i % 2 ? *a : *b)->run(inputs);
    ASSERT_TRUE(again.has_value());
    EXPECT_TRUE(same_bits(y, again->at("y"))) << "run " << i;
  }
}

std::filesystem::path public_model(const std::string& name) {
  const char* env = std::getenv("ONNXDBG_MODELS");
  const std::filesystem::path dir =
      env ? std::filesystem::path(env)
          : std::filesystem::path(ONNXDBG_SOURCE_DIR) / "third_party" / "models";
  return dir / name;
}

TEST(Determinism, PublicClassifierGivesTheSameBitsEveryRun) {
  const auto path = public_model("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "public models not fetched";
  auto m = load_model(path);
  ASSERT_TRUE(m.has_value());
  const std::map<std::string, Tensor> inputs = {{"x", pseudo_random({1, 3, 48, 192}, 11)}};
  auto a = reference::Interpreter::create(m->proto, m->base_dir);
  auto b = reference::Interpreter::create(m->proto, m->base_dir);
  ASSERT_TRUE(a.has_value() && b.has_value());
  auto ra = (*a)->run(inputs), rb = (*b)->run(inputs), ra2 = (*a)->run(inputs);
  ASSERT_TRUE(ra.has_value() && rb.has_value() && ra2.has_value());
  for (const auto& [name, t] : *ra) {
    EXPECT_TRUE(same_bits(t, rb->at(name))) << name;
    EXPECT_TRUE(same_bits(t, ra2->at(name))) << name;
  }
}

// Every pair of shapes below goes through for_each_broadcast_run and the per-element walk; the
// offsets each gives for every output element must agree.
TEST(Determinism, BroadcastRunsVisitTheSameOffsetsAsTheElementWalk) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}},   {{2, 3, 4, 5}, {}},     {{2, 3, 4, 5}, {1, 3, 1, 1}},
      {{2, 3, 4, 5}, {3, 1, 5}},      {{1, 3, 1}, {2, 1, 4}}, {{4, 1}, {1, 4}},
      {{2, 1, 4, 1}, {1, 3, 1, 5}},   {{1}, {1, 1, 1}},       {{5, 0, 2}, {1, 2}},
      {{1, 16, 1, 1}, {1, 16, 8, 8}}, {{7, 1, 3}, {7, 2, 3}}};
  for (const auto& [sa, sb] : cases) {
    auto out = reference::broadcast_shapes({sa, sb});
    ASSERT_TRUE(out.has_value());
    const std::vector<std::vector<int64_t>> strides = {reference::broadcast_strides(sa, *out),
                                                       reference::broadcast_strides(sb, *out)};
    std::vector<std::pair<int64_t, int64_t>> walk, runs;
    reference::for_each_broadcast(
        *out, strides, [&](int64_t, const int64_t* o) { walk.emplace_back(o[0], o[1]); });
    int64_t expect_next = 0;
    reference::for_each_broadcast_run(
        *out, strides, [&](int64_t i, const int64_t* o, int64_t len, const int64_t* st) {
          EXPECT_EQ(i, expect_next);
          expect_next = i + len;
          for (int64_t j = 0; j < len; ++j) runs.emplace_back(o[0] + j * st[0], o[1] + j * st[1]);
        });
    EXPECT_EQ(walk, runs) << shape_to_string(sa) << " with " << shape_to_string(sb);
    // The same offsets when the output is cut into chunks of 7 elements (runs split at the cuts),
    // as the threaded kernels cut it.
    const reference::BroadcastRuns cut(*out, strides);
    std::vector<std::pair<int64_t, int64_t>> chunked;
    for (int64_t b = 0; b < cut.numel; b += 7) {
      int64_t next = b;
      cut.for_range(b, std::min(cut.numel, b + 7),
                    [&](int64_t i, const int64_t* o, int64_t len, const int64_t* st) {
                      EXPECT_EQ(i, next);
                      next = i + len;
                      for (int64_t j = 0; j < len; ++j)
                        chunked.emplace_back(o[0] + j * st[0], o[1] + j * st[1]);
                    });
      EXPECT_EQ(next, std::min(cut.numel, b + 7));
    }
    EXPECT_EQ(walk, chunked) << shape_to_string(sa) << " with " << shape_to_string(sb);
  }
}

TEST(Determinism, ProfilingTotalsTimePerOpType) {
  const auto model = parse_text_model(kConvNet);
  reference::InterpreterOptions options;
  options.profile = true;
  auto in = reference::Interpreter::create(model, {}, options);
  ASSERT_TRUE(in.has_value());
  const auto inputs = conv_net_inputs();
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE((*in)->run(inputs).has_value());
  ASSERT_TRUE((*in)->run(inputs).has_value());
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto profile = (*in)->profile();
  int64_t conv_calls = 0, mul_calls = 0;
  double conv_seconds = 0, total_seconds = 0;
  for (const auto& p : profile) {
    total_seconds += p.seconds;
    if (p.op_type == "Conv") conv_calls = p.calls, conv_seconds = p.seconds;
    if (p.op_type == "Mul") mul_calls = p.calls;
  }
  EXPECT_EQ(conv_calls, 6);  // three per run
  EXPECT_EQ(mul_calls, 4);
  // The kernels' times are measured: six Convs take some time, and all of them together no more
  // than the two runs did.
  EXPECT_GT(conv_seconds, 0.0);
  EXPECT_LE(total_seconds, wall);
  const std::string table = reference::format_profile(profile, 1.0);
  EXPECT_NE(table.find("Conv"), std::string::npos) << table;
}

// Runs `model` on `inputs` with each thread count and checks that every output has the same bits
// as with one thread.
void expect_same_bits_for_thread_counts(const onnx::ModelProto& model,
                                        const std::filesystem::path& base_dir,
                                        const std::map<std::string, Tensor>& inputs,
                                        const std::vector<int>& counts) {
  std::map<std::string, Tensor> one;
  for (int threads : counts) {
    reference::InterpreterOptions options;
    options.threads = threads;
    auto in = reference::Interpreter::create(model, base_dir, options);
    ASSERT_TRUE(in.has_value()) << in.status().to_string();
    auto out = (*in)->run(inputs);
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    if (one.empty()) {
      one = std::move(*out);
      continue;
    }
    for (const auto& [name, t] : one)
      EXPECT_TRUE(same_bits(t, out->at(name))) << name << " with " << threads << " threads";
  }
}

// Big enough that every threaded path runs: convs cut into bands (more than kConvBandColumns
// output columns), into column tiles (pointwise) and into row blocks (144 output channels on few
// columns), depthwise planes, BatchNormalization planes, elementwise chunks with flat, scalar and
// per-channel operands.
const char* kBigConvNet = R"(
<ir_version: 8, opset_import: ["" : 13]>
net (float[1,3,97,131] x, float[16,3,3,3] w1, float[16] b1, float[16,1,3,3] wd, float[16] s,
     float[16] bb, float[16] mu, float[16] var, float[24,16,1,1] wp, float[1,24,1,1] cb,
     float[144,24,3,3] w2) => (float[1,144,49,66] y, float[1,24,97,131] z) {
  c1 = Conv <pads = [1, 1, 1, 1]> (x, w1, b1)
  dw = Conv <group = 16, pads = [1, 1, 1, 1]> (c1, wd)
  bn = BatchNormalization (dw, s, bb, mu, var)
  lo = Constant <value = float {0.0}> ()
  hi = Constant <value = float {6.0}> ()
  cl = Clip (bn, lo, hi)
  m = Mul (bn, cl)
  pw = Conv (m, wp)
  z = Add (pw, cb)
  y = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (z, w2)
}
)";

std::map<std::string, Tensor> big_conv_net_inputs() {
  Tensor var = pseudo_random({16}, 7);
  for (int64_t i = 0; i < 16; ++i) var.data<float>()[i] += 2.0f;
  return {{"x", pseudo_random({1, 3, 97, 131}, 1)},
          {"w1", pseudo_random({16, 3, 3, 3}, 2)},
          {"b1", pseudo_random({16}, 3)},
          {"wd", pseudo_random({16, 1, 3, 3}, 4)},
          {"s", pseudo_random({16}, 5)},
          {"bb", pseudo_random({16}, 6)},
          {"mu", pseudo_random({16}, 8)},
          {"var", var},
          {"wp", pseudo_random({24, 16, 1, 1}, 9)},
          {"cb", pseudo_random({1, 24, 1, 1}, 10)},
          {"w2", pseudo_random({144, 24, 3, 3}, 11)}};
}

// Conv of x [1, C, H, W] with w [M, C, KH, KW] (pads p, stride s), summed in double.
std::vector<double> naive_conv_f64(const Tensor& x, const Tensor& w, int64_t pad, int64_t stride) {
  const int64_t c = x.dim(1), h = x.dim(2), wd = x.dim(3), m = w.dim(0), kh = w.dim(2),
                kw = w.dim(3);
  const int64_t oh = (h + 2 * pad - kh) / stride + 1, ow = (wd + 2 * pad - kw) / stride + 1;
  std::vector<double> y(static_cast<size_t>(m * oh * ow), 0.0);
  const float* px = x.data<float>();
  const float* pw = w.data<float>();
  for (int64_t o = 0; o < m; ++o)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t q = 0; q < ow; ++q) {
        double acc = 0;
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t ih = r * stride - pad + i, iw = q * stride - pad + j;
              if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
              acc += double(px[(ci * h + ih) * wd + iw]) * pw[((o * c + ci) * kh + i) * kw + j];
            }
        y[static_cast<size_t>((o * oh + r) * ow + q)] = acc;
      }
  return y;
}

TEST(Determinism, ThreadCountDoesNotChangeTheBits) {
  expect_same_bits_for_thread_counts(parse_text_model(kBigConvNet), {}, big_conv_net_inputs(),
                                     {1, 2, 3, 8});
}

// The tiles of the threaded conv cover every output element once: each path against a plain
// double-precision convolution, on three threads.
TEST(Determinism, ThreadedConvTilesMatchAPlainConvolution) {
  struct Case {
    Shape x, w;
    int64_t pad, stride;
    const char* path;
  };
  const std::vector<Case> cases = {
      {{1, 3, 97, 131}, {16, 3, 3, 3}, 1, 1, "bands of im2col"},
      {{1, 16, 97, 131}, {24, 16, 1, 1}, 0, 1, "pointwise column tiles"},
      {{1, 24, 30, 41}, {144, 24, 3, 3}, 1, 1, "row blocks of one im2col"},
      {{1, 24, 41, 30}, {130, 24, 1, 1}, 0, 1, "pointwise row blocks"},
  };
  for (const auto& cs : cases) {
    const auto dims = [](const Shape& sh) {
      std::string d;
      for (int64_t v : sh) d += (d.empty() ? "" : ",") + std::to_string(v);
      return d;
    };
    const std::string p = std::to_string(cs.pad), st = std::to_string(cs.stride);
    const std::string text = "<ir_version: 8, opset_import: [\"\" : 13]>\nnet (float[" +
                             dims(cs.x) + "] x, float[" + dims(cs.w) +
                             "] w) => (float y) {\n  y = Conv <pads = [" + p + ", " + p + ", " + p +
                             ", " + p + "], strides = [" + st + ", " + st + "]> (x, w)\n}\n";
    SCOPED_TRACE(std::string(cs.path) + ": " + text);
    const Tensor x = pseudo_random(cs.x, 21), w = pseudo_random(cs.w, 22);
    reference::InterpreterOptions options;
    options.threads = 3;
    auto in = reference::Interpreter::create(parse_text_model(text.c_str()), {}, options);
    ASSERT_TRUE(in.has_value()) << in.status().to_string();
    auto out = (*in)->run({{"x", x}, {"w", w}});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    const auto expect = naive_conv_f64(x, w, cs.pad, cs.stride);
    const Tensor& y = out->at("y");
    ASSERT_EQ(static_cast<size_t>(y.numel()), expect.size());
    double worst = 0;
    for (size_t i = 0; i < expect.size(); ++i)
      worst = std::max(worst, std::abs(double(y.data<float>()[i]) - expect[i]));
    EXPECT_LT(worst, 1e-4);
  }
}

// MatMul (folded batch cut into row blocks; batched pairs one per task), Gemm (cut into column
// blocks) and ConvTranspose (blocks of output channels): the same bits on every thread count, and
// the values of a plain double-precision product.
const char* kProducts = R"(
<ir_version: 8, opset_import: ["" : 13]>
net (float[2,150,64] a, float[64,50] b, float[4,20,30] c, float[4,30,10] d, float[10,64] e,
     float[64,3000] f, float[1,16,20,20] x, float[16,40,2,2] w) =>
    (float[2,150,50] ab, float[4,20,10] cd, float[10,3000] ef, float[1,40,40,40] t) {
  ab = MatMul (a, b)
  cd = MatMul (c, d)
  ef = Gemm (e, f)
  t = ConvTranspose <strides = [2, 2]> (x, w)
}
)";

TEST(Determinism, ThreadedProductsMatchPlainProducts) {
  const std::map<std::string, Tensor> in = {
      {"a", pseudo_random({2, 150, 64}, 31)},    {"b", pseudo_random({64, 50}, 32)},
      {"c", pseudo_random({4, 20, 30}, 33)},     {"d", pseudo_random({4, 30, 10}, 34)},
      {"e", pseudo_random({10, 64}, 35)},        {"f", pseudo_random({64, 3000}, 36)},
      {"x", pseudo_random({1, 16, 20, 20}, 37)}, {"w", pseudo_random({16, 40, 2, 2}, 38)}};
  const auto model = parse_text_model(kProducts);
  expect_same_bits_for_thread_counts(model, {}, in, {1, 2, 3});
  reference::InterpreterOptions options;
  options.threads = 3;
  auto interp = reference::Interpreter::create(model, {}, options);
  ASSERT_TRUE(interp.has_value()) << interp.status().to_string();
  auto out = (*interp)->run(in);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  const auto f = [&](const char* name) { return in.at(name).data<float>(); };
  double worst = 0;
  const auto check = [&](const Tensor& y, int64_t i, double expect) {
    worst = std::max(worst, std::abs(double(y.data<float>()[i]) - expect));
  };
  // y[r, j] = sum_q x[r, q] * w[q, j] for an [rows, k] x and a [k, cols] w, in double.
  const auto product = [&](const float* x, const float* w, int64_t rows, int64_t k, int64_t cols,
                           const Tensor& y, int64_t y_offset) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j) {
        double acc = 0;
        for (int64_t q = 0; q < k; ++q) acc += double(x[r * k + q]) * w[q * cols + j];
        check(y, y_offset + r * cols + j, acc);
      }
  };
  product(f("a"), f("b"), 300, 64, 50, out->at("ab"), 0);  // the batch folded into the rows
  for (int64_t bt = 0; bt < 4; ++bt)
    product(f("c") + bt * 20 * 30, f("d") + bt * 30 * 10, 20, 30, 10, out->at("cd"), bt * 20 * 10);
  product(f("e"), f("f"), 10, 64, 3000, out->at("ef"), 0);
  // Stride 2, kernel 2: every output pixel gets exactly one tap.
  for (int64_t o = 0; o < 40; ++o)
    for (int64_t i = 0; i < 40; ++i)
      for (int64_t j = 0; j < 40; ++j) {
        double acc = 0;
        for (int64_t ci = 0; ci < 16; ++ci)
          acc += double(f("x")[(ci * 20 + i / 2) * 20 + j / 2]) *
                 f("w")[((ci * 40 + o) * 2 + i % 2) * 2 + j % 2];
        check(out->at("t"), (o * 40 + i) * 40 + j, acc);
      }
  EXPECT_LT(worst, 1e-4);
}

TEST(Determinism, PublicModelsGiveTheSameBitsOnOneAndTwoThreads) {
  const auto det = public_model("ch_PP-OCRv4_det_infer.onnx");
  const auto cls = public_model("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  if (!std::filesystem::exists(det) || !std::filesystem::exists(cls))
    GTEST_SKIP() << "public models not fetched";
  for (const auto& [path, shape] : std::vector<std::pair<std::filesystem::path, Shape>>{
           {det, {1, 3, 224, 256}}, {cls, {1, 3, 48, 192}}}) {
    SCOPED_TRACE(path.filename().string());
    auto m = load_model(path);
    ASSERT_TRUE(m.has_value());
    expect_same_bits_for_thread_counts(m->proto, m->base_dir, {{"x", pseudo_random(shape, 12)}},
                                       {1, 2});
  }
}

TEST(Determinism, ReferenceBackendReadsTheThreadsOption) {
  auto three = reference_options(BackendSpec{"reference", {{"threads", "3"}}});
  ASSERT_TRUE(three.has_value()) << three.status().to_string();
  EXPECT_EQ(three->threads, 3);
  auto dflt = reference_options(BackendSpec{"reference", {}});
  ASSERT_TRUE(dflt.has_value());
  EXPECT_EQ(dflt->threads, 1);
  auto aut = reference_options(BackendSpec{"reference", {{"threads", "auto"}}});
  ASSERT_TRUE(aut.has_value());
  EXPECT_EQ(aut->threads, reference::default_thread_count());
  EXPECT_GE(aut->threads, 1);
  for (const char* bad : {"0", "-2", "two", "300", ""}) {
    auto r = reference_options(BackendSpec{"reference", {{"threads", bad}}});
    if (std::string(bad).empty()) {  // an empty value is the default
      EXPECT_TRUE(r.has_value());
      continue;
    }
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.status().message().find("threads must be an integer from 1 to 256 or auto"),
              std::string::npos)
        << r.status().message();
  }
}

// The BLAS the reference links must survive GEMMs and GEMVs from several threads at once:
// OpenBLAS's serial build shares its buffers without locks and gave wrong values here, the
// pthread build does not.
TEST(ThreadPool, BlasGivesTheSameResultsFromSeveralThreadsAtOnce) {
  struct Case {
    int64_t m, n, k;
  };
  // This mix (a wide GEMM beside a GEMV) gave about 1 wrong result in 200 calls on the serial
  // build; one size alone gave none.
  const std::vector<Case> cases = {{16, 8192, 27}, {1, 512, 2048}, {64, 1, 1152}, {40, 400, 16}};
  std::vector<Tensor> a, b, expect;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    a.push_back(pseudo_random({c.m, c.k}, static_cast<uint32_t>(40 + i)));
    b.push_back(pseudo_random({c.k, c.n}, static_cast<uint32_t>(50 + i)));
    Tensor y(DType::kFloat, {c.m, c.n});
    ASSERT_TRUE(reference::gemm<float>(false, false, c.m, c.n, c.k, 1.0f, a[i].data<float>(), c.k,
                                       b[i].data<float>(), c.n, 0.0f, y.data<float>(), c.n)
                    .is_ok());
    expect.push_back(std::move(y));
  }
  reference::ThreadPool pool(3);
  std::atomic<int> wrong{0};
  pool.run(3000, [&](int64_t t) {
    const size_t i = static_cast<size_t>(t) % cases.size();
    const Case& c = cases[i];
    Tensor y(DType::kFloat, {c.m, c.n});
    Status st = reference::gemm<float>(false, false, c.m, c.n, c.k, 1.0f, a[i].data<float>(), c.k,
                                       b[i].data<float>(), c.n, 0.0f, y.data<float>(), c.n);
    if (!st.is_ok() || !same_bits(y, expect[i])) wrong++;
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ThreadPool, RunsEveryChunkOnceAndPassesOnTheFirstError) {
  reference::ThreadPool pool(3);
  EXPECT_EQ(pool.threads(), 3);
  std::vector<std::atomic<int>> seen(1000);
  pool.run(1000, [&](int64_t i) { seen[static_cast<size_t>(i)].fetch_add(1); });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  EXPECT_THROW(pool.run(50,
                        [](int64_t i) {
                          if (i == 17) throw std::runtime_error("chunk 17");
                        }),
               std::runtime_error);
  // Many short loops in a row: workers that wake after a loop has ended find nothing to do.
  std::atomic<int64_t> calls{0};
  for (int r = 0; r < 20000; ++r) pool.run(2, [&](int64_t) { calls++; });
  EXPECT_EQ(calls.load(), 40000);
  // The pool still works after an error.
  std::atomic<int64_t> sum{0};
  pool.run(100, [&](int64_t i) { sum += i; });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ThreadPool, StatusLoopsRunEveryChunkAndReturnTheLowestFailure) {
  for (int threads : {1, 3}) {
    reference::ThreadPool pool(threads);
    reference::ScopedThreadPool scope(&pool);
    std::vector<std::atomic<int>> seen(200);
    const Status st = reference::parallel_for_status(200, [&](int64_t i) {
      seen[static_cast<size_t>(i)].fetch_add(1);
      if (i % 50 == 49) return invalid_argument("chunk " + std::to_string(i));
      return Status::ok();
    });
    for (const auto& s : seen) EXPECT_EQ(s.load(), 1) << threads << " threads";
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(st.message(), "chunk 49") << threads << " threads";
    EXPECT_TRUE(reference::parallel_for_status(10, [](int64_t) { return Status::ok(); }).is_ok());
  }
}

TEST(ThreadPool, NestedLoopsRunInlineAndRangesCoverEverything) {
  reference::ThreadPool pool(2);
  reference::ScopedThreadPool scope(&pool);
  std::vector<std::atomic<int>> seen(64 * 10);
  reference::parallel_for(64, [&](int64_t i) {
    reference::parallel_for(10, [&](int64_t j) { seen[static_cast<size_t>(i * 10 + j)]++; });
  });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  std::vector<int> covered(1001, 0);
  reference::parallel_range(1001, 100, [&](int64_t b, int64_t e) {
    EXPECT_EQ(b % 100, 0);
    EXPECT_LE(e - b, 100);
    for (int64_t i = b; i < e; ++i) covered[static_cast<size_t>(i)]++;
  });
  EXPECT_EQ(std::count(covered.begin(), covered.end(), 1), 1001);
}

}  // namespace
}  // namespace onnxdbg
