// Recurrent kernels: LSTM one step against the spec's gate formulas, LSTM bidirectional with
// sequence_lens against a naive per-direction loop, layout 1 against layout 0, GRU with and without
// linear_before_reset, RNN reverse with a custom activation, and a shape error.
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

std::vector<float> wave(int64_t n, float phase = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = std::sin(static_cast<float>(i) * 0.7f + phase) * 0.5f;
  return v;
}
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
size_t at(int64_t i) { return static_cast<size_t>(i); }

// One LSTM direction over x [seq][batch][in] with the spec's equations; returns Y rows
// (seq x batch x hidden, zeros past each sequence's length) and updates h and c in place.
std::vector<double> naive_lstm(const std::vector<float>& x, int64_t seq, int64_t batch, int64_t in,
                               int64_t hs, const float* w, const float* r, const float* b,
                               const float* p, bool reverse, const std::vector<int64_t>& lens,
                               std::vector<double>& h, std::vector<double>& c) {
  std::vector<double> y(at(seq * batch * hs), 0.0);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t s = 0; s < lens[at(bi)]; ++s) {
      const int64_t t = reverse ? lens[at(bi)] - 1 - s : s;
      std::vector<double> gates(at(4 * hs));
      for (int64_t gi = 0; gi < 4 * hs; ++gi) {
        double acc = b[gi] + b[4 * hs + gi];
        for (int64_t k = 0; k < in; ++k)
          acc += x[at((t * batch + bi) * in + k)] * static_cast<double>(w[gi * in + k]);
        for (int64_t k = 0; k < hs; ++k) acc += h[at(bi * hs + k)] * r[gi * hs + k];
        gates[at(gi)] = acc;
      }
      for (int64_t j = 0; j < hs; ++j) {
        const double cp = c[at(bi * hs + j)];
        const double i = sigmoid(gates[at(j)] + p[j] * cp);
        const double f = sigmoid(gates[at(2 * hs + j)] + p[2 * hs + j] * cp);
        const double cn = f * cp + i * std::tanh(gates[at(3 * hs + j)]);
        const double o = sigmoid(gates[at(hs + j)] + p[hs + j] * cn);
        c[at(bi * hs + j)] = cn;
        h[at(bi * hs + j)] = o * std::tanh(cn);
        y[at((t * batch + bi) * hs + j)] = h[at(bi * hs + j)];
      }
    }
  return y;
}

TEST(LSTM, ForwardSingleStepMatchesTheGateFormulas) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 14]>
g (float[1,1,2] x, float[1,8,2] w, float[1,8,2] r, float[1,16] b, int32[1] lens, float[1,1,2] h0, float[1,1,2] c0, float[1,6] p)
  => (float[1,1,1,2] y, float[1,1,2] yh, float[1,1,2] yc) {
  y, yh, yc = LSTM<hidden_size=2>(x, w, r, b, lens, h0, c0, p)
}
)");
  const std::vector<float> x{0.5f, -1.0f}, h0{0.1f, -0.2f}, c0{0.3f, 0.4f};
  auto w = wave(16), r = wave(16, 1.0f), b = wave(16, 2.0f), p = wave(6, 3.0f);
  // Gate order i, o, f, c; each gate is W x + R h0 + Wb + Rb (+ peephole for i, f, o).
  auto gate = [&](int g, int j) {
    const int row = g * 2 + j;
    return w[at(row * 2)] * x[0] + w[at(row * 2 + 1)] * x[1] + r[at(row * 2)] * h0[0] +
           r[at(row * 2 + 1)] * h0[1] + b[at(row)] + b[at(8 + row)];
  };
  std::vector<double> h(2), c(2);
  for (int j = 0; j < 2; ++j) {
    const double i = sigmoid(gate(0, j) + p[at(j)] * c0[at(j)]);
    const double f = sigmoid(gate(2, j) + p[at(4 + j)] * c0[at(j)]);
    c[at(j)] = f * c0[at(j)] + i * std::tanh(gate(3, j));
    const double o = sigmoid(gate(1, j) + p[at(2 + j)] * c[at(j)]);
    h[at(j)] = o * std::tanh(c[at(j)]);
  }
  auto res = run_reference(model, {{"x", Tensor::from_vector<float>({1, 1, 2}, x)},
                                   {"w", Tensor::from_vector<float>({1, 8, 2}, w)},
                                   {"r", Tensor::from_vector<float>({1, 8, 2}, r)},
                                   {"b", Tensor::from_vector<float>({1, 16}, b)},
                                   {"lens", Tensor::from_vector<int32_t>({1}, {1})},
                                   {"h0", Tensor::from_vector<float>({1, 1, 2}, h0)},
                                   {"c0", Tensor::from_vector<float>({1, 1, 2}, c0)},
                                   {"p", Tensor::from_vector<float>({1, 6}, p)}});
  expect_tensor_near(res["y"], {1, 1, 1, 2}, h, 1e-6, 1e-5);
  expect_tensor_near(res["yh"], {1, 1, 2}, h, 1e-6, 1e-5);
  expect_tensor_near(res["yc"], {1, 1, 2}, c, 1e-6, 1e-5);
}

TEST(LSTM, BidirectionalWithSequenceLengthsMatchesNaiveLoop) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 14]>
g (float[4,2,3] x, float[2,8,3] w, float[2,8,2] r, float[2,16] b, int32[2] lens, float[2,6] p)
  => (float[4,2,2,2] y, float[2,2,2] yh) {
  y, yh = LSTM<hidden_size=2, direction="bidirectional">(x, w, r, b, lens, , , p)
}
)");
  const int64_t seq = 4, batch = 2, in = 3, hs = 2;
  auto x = wave(seq * batch * in), w = wave(2 * 8 * 3, 0.5f), r = wave(2 * 8 * 2, 1.5f),
       b = wave(2 * 16, 2.5f), p = wave(12, 3.5f);
  const std::vector<int64_t> lens{4, 2};
  std::vector<double> want_y(at(seq * 2 * batch * hs)), want_h;
  for (int64_t d = 0; d < 2; ++d) {
    std::vector<double> h(at(batch * hs), 0.0), c(at(batch * hs), 0.0);
    auto y = naive_lstm(x, seq, batch, in, hs, w.data() + d * 24, r.data() + d * 16,
                        b.data() + d * 16, p.data() + d * 6, d == 1, lens, h, c);
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t k = 0; k < batch * hs; ++k)
        want_y[at((t * 2 + d) * batch * hs + k)] = y[at(t * batch * hs + k)];
    want_h.insert(want_h.end(), h.begin(), h.end());
  }
  auto res = run_reference(model, {{"x", Tensor::from_vector<float>({seq, batch, in}, x)},
                                   {"w", Tensor::from_vector<float>({2, 8, 3}, w)},
                                   {"r", Tensor::from_vector<float>({2, 8, 2}, r)},
                                   {"b", Tensor::from_vector<float>({2, 16}, b)},
                                   {"lens", Tensor::from_vector<int32_t>({2}, {4, 2})},
                                   {"p", Tensor::from_vector<float>({2, 6}, p)}});
  expect_tensor_near(res["y"], {seq, 2, batch, hs}, want_y, 1e-6, 1e-5);
  expect_tensor_near(res["yh"], {2, batch, hs}, want_h, 1e-6, 1e-5);
}

TEST(LSTM, LayoutOneIsBatchMajor) {
  const std::string body = R"(
g (float[A,B,3] x, float[1,8,3] w, float[1,8,2] r) => (float[] y, float[] yh) {
  y, yh = LSTM<hidden_size=2, layout=L>(x, w, r)
}
)";
  auto make = [&](int layout) {
    std::string text = "<ir_version: 8, opset_import: [\"\" : 14]>" + body;
    text.replace(text.find("A,B"), 3, layout ? "2,3" : "3,2");
    text.replace(text.find("layout=L"), 8, "layout=" + std::to_string(layout));
    return parse_text_model(text);
  };
  auto x = wave(18), w = wave(24, 1.0f), r = wave(16, 2.0f);
  std::vector<float> xt(18);  // [seq 3, batch 2, 3] -> [batch 2, seq 3, 3]
  for (int t = 0; t < 3; ++t)
    for (int b = 0; b < 2; ++b)
      for (int k = 0; k < 3; ++k) xt[at((b * 3 + t) * 3 + k)] = x[at((t * 2 + b) * 3 + k)];
  std::map<std::string, Tensor> common{{"w", Tensor::from_vector<float>({1, 8, 3}, w)},
                                       {"r", Tensor::from_vector<float>({1, 8, 2}, r)}};
  auto in0 = common, in1 = common;
  in0["x"] = Tensor::from_vector<float>({3, 2, 3}, x);
  in1["x"] = Tensor::from_vector<float>({2, 3, 3}, xt);
  auto r0 = run_reference(make(0), in0), r1 = run_reference(make(1), in1);
  ASSERT_EQ(shape_to_string(r1["y"].shape()), "2x3x1x2");
  ASSERT_EQ(shape_to_string(r1["yh"].shape()), "2x1x2");
  std::vector<double> y0 = testing::values(r0["y"]), want(12);  // [3,1,2,2] -> [2,3,1,2]
  for (int t = 0; t < 3; ++t)
    for (int b = 0; b < 2; ++b)
      for (int j = 0; j < 2; ++j) want[at((b * 3 + t) * 2 + j)] = y0[at((t * 2 + b) * 2 + j)];
  expect_tensor_near(r1["y"], {2, 3, 1, 2}, want, 1e-6, 1e-6);
  expect_tensor_near(r1["yh"], {2, 1, 2}, testing::values(r0["yh"]), 1e-6, 1e-6);
}

TEST(GRU, SingleStepWithAndWithoutLinearBeforeReset) {
  const std::vector<float> x{0.3f, -0.6f}, h0{0.2f, -0.1f};
  auto w = wave(12), r = wave(12, 1.0f), b = wave(12, 2.0f);
  for (int lbr : {0, 1}) {
    auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 14]>
g (float[1,1,2] x, float[1,6,2] w, float[1,6,2] r, float[1,12] b, float[1,1,2] h0) => (float[1,1,2] yh) {
  y, yh = GRU<hidden_size=2, linear_before_reset=)" +
                                  std::to_string(lbr) + R"(>(x, w, r, b, , h0)
}
)");
    auto wx = [&](int row) {
      return w[at(row * 2)] * x[0] + w[at(row * 2 + 1)] * x[1] + b[at(row)];
    };
    auto rh = [&](int row, const double* hv) {
      return r[at(row * 2)] * hv[0] + r[at(row * 2 + 1)] * hv[1];
    };
    const double hp[2] = {h0[0], h0[1]};
    double z[2], rr[2], want[2];
    for (int j = 0; j < 2; ++j) {
      z[j] = sigmoid(wx(j) + rh(j, hp) + b[at(6 + j)]);
      rr[j] = sigmoid(wx(2 + j) + rh(2 + j, hp) + b[at(8 + j)]);
    }
    const double rhp[2] = {rr[0] * hp[0], rr[1] * hp[1]};
    for (int j = 0; j < 2; ++j) {
      const double ht = lbr ? std::tanh(wx(4 + j) + rr[j] * (rh(4 + j, hp) + b[at(10 + j)]))
                            : std::tanh(wx(4 + j) + rh(4 + j, rhp) + b[at(10 + j)]);
      want[j] = (1 - z[j]) * ht + z[j] * hp[j];
    }
    auto res = run_reference(model, {{"x", Tensor::from_vector<float>({1, 1, 2}, x)},
                                     {"w", Tensor::from_vector<float>({1, 6, 2}, w)},
                                     {"r", Tensor::from_vector<float>({1, 6, 2}, r)},
                                     {"b", Tensor::from_vector<float>({1, 12}, b)},
                                     {"h0", Tensor::from_vector<float>({1, 1, 2}, h0)}});
    SCOPED_TRACE(lbr);
    expect_tensor_near(res["yh"], {1, 1, 2}, {want[0], want[1]}, 1e-6, 1e-5);
  }
}

TEST(RNN, ReverseWithLeakyReluActivation) {
  // hidden 1, input 1: h_t = LeakyRelu_0.5(w x_t + r h_{t+1}), processed from the last step back.
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 14]>
g (float[2,1,1] x, float[1,1,1] w, float[1,1,1] r) => (float[2,1,1,1] y, float[1,1,1] yh) {
  y, yh = RNN<hidden_size=1, direction="reverse", activations=["LeakyRelu"], activation_alpha=[0.5]>(x, w, r)
}
)");
  auto res = run_reference(model, {{"x", Tensor::from_vector<float>({2, 1, 1}, {1, -4})},
                                   {"w", Tensor::from_vector<float>({1, 1, 1}, {2})},
                                   {"r", Tensor::from_vector<float>({1, 1, 1}, {3})}});
  // Step x=-4: h = LeakyRelu(-8) = -4. Step x=1: h = LeakyRelu(2 - 12) = -5.
  expect_tensor_near(res["y"], {2, 1, 1, 1}, {-5, -4});
  expect_tensor_near(res["yh"], {1, 1, 1}, {-5});
}

TEST(LSTM, WrongWeightShapeIsAModelError) {
  auto model = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 14]>
g (float[1,1,2] x, float[1,6,2] w, float[1,8,2] r) => (float[1,1,2] yh) { y, yh = LSTM<hidden_size=2>(x, w, r) }
)");
  auto msg = run_reference_error(model, {{"x", Tensor(DType::kFloat, {1, 1, 2})},
                                         {"w", Tensor(DType::kFloat, {1, 6, 2})},
                                         {"r", Tensor(DType::kFloat, {1, 8, 2})}});
  EXPECT_NE(msg.find("expected W [1, 8, 2]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("W 1x6x2"), std::string::npos) << msg;
}

}  // namespace
}  // namespace onnxdbg
