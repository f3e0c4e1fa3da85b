// Pieces shared by the recurrent kernels LSTM, GRU and RNN (ONNX RNN/GRU/LSTM specs): the
// activation functions with their alpha/beta attributes, shape checks of X/W/R, sequence_lens,
// the layout attribute (0: sequence-major, 1: batch-major) and the initial/final state tensors.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "reference/kernel.h"

namespace onnxdbg::reference {

/// One activation of the RNN family ("Functions" table of the ONNX RNN spec).
struct RnnActivation {
  enum Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = kTanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (kind) {
      case kRelu:
        return std::max(0.0, x);
      case kTanh:
        return std::tanh(x);
      case kSigmoid:
        return 1.0 / (1.0 + std::exp(-x));
      case kAffine:
        return alpha * x + beta;
      case kLeakyRelu:
        return x < 0 ? alpha * x : x;
      case kThresholdedRelu:
        return x > alpha ? x : 0.0;
      case kScaledTanh:
        return alpha * std::tanh(beta * x);
      case kHardSigmoid:
        return std::clamp(alpha * x + beta, 0.0, 1.0);
      case kElu:
        return x < 0 ? alpha * (std::exp(x) - 1.0) : x;
      case kSoftsign:
        return x / (1.0 + std::abs(x));
      case kSoftplus:
        return std::log1p(std::exp(x));
    }
    return x;
  }
};

/// Reads `activations` (default: `defaults` repeated per direction), consuming activation_alpha
/// and activation_beta in order for the functions that take them (defaults as ONNX Runtime:
/// LeakyRelu 0.01, ThresholdedRelu 1, HardSigmoid 0.2/0.5, Elu 1, ScaledTanh 1/1, Affine 1/0).
/// Errors: kModelError for a wrong count, kUnsupported for an unknown name.
inline Expected<std::vector<RnnActivation>> read_rnn_activations(
    const KernelContext& ctx, int64_t num_dir, const std::vector<std::string>& defaults) {
  auto names = ctx.attr_strings("activations");
  const size_t want = defaults.size() * static_cast<size_t>(num_dir);
  if (names.empty())
    for (int64_t d = 0; d < num_dir; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() == defaults.size() && want == 2 * names.size())
    names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != want)
    return model_error(ctx.describe() + ": activations lists " + std::to_string(names.size()) +
                       " functions, expected " + std::to_string(want));
  const auto alphas = ctx.attr_floats("activation_alpha"),
             betas = ctx.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<RnnActivation> out;
  for (const auto& raw : names) {
    std::string n = raw;
    for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    RnnActivation a;
    double da = 0, db = 0;
    bool uses_a = false, uses_b = false;
    if (n == "relu")
      a.kind = RnnActivation::kRelu;
    else if (n == "tanh")
      a.kind = RnnActivation::kTanh;
    else if (n == "sigmoid")
      a.kind = RnnActivation::kSigmoid;
    else if (n == "affine") {
      a.kind = RnnActivation::kAffine;
      uses_a = uses_b = true;
      da = 1;
      db = 0;
    } else if (n == "leakyrelu") {
      a.kind = RnnActivation::kLeakyRelu;
      uses_a = true;
      da = 0.01;
    } else if (n == "thresholdedrelu") {
      a.kind = RnnActivation::kThresholdedRelu;
      uses_a = true;
      da = 1;
    } else if (n == "scaledtanh") {
      a.kind = RnnActivation::kScaledTanh;
      uses_a = uses_b = true;
      da = 1;
      db = 1;
    } else if (n == "hardsigmoid") {
      a.kind = RnnActivation::kHardSigmoid;
      uses_a = uses_b = true;
      da = 0.2;
      db = 0.5;
    } else if (n == "elu") {
      a.kind = RnnActivation::kElu;
      uses_a = true;
      da = 1;
    } else if (n == "softsign")
      a.kind = RnnActivation::kSoftsign;
    else if (n == "softplus")
      a.kind = RnnActivation::kSoftplus;
    else
      return unsupported(ctx.describe() + ": unknown activation '" + raw + "'");
    if (uses_a) a.alpha = ai < alphas.size() ? alphas[ai++] : da;
    if (uses_b) a.beta = bi < betas.size() ? betas[bi++] : db;
    out.push_back(a);
  }
  return out;
}

/// Dimensions and attributes common to the recurrent ops.
struct RnnSetup {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, num_dir = 1, layout = 0;
  std::string direction;
  std::vector<int64_t> lens;  ///< valid steps per batch entry (seq when sequence_lens is absent)
  bool has_clip = false;
  double clip = 0;
  bool reverse(int64_t d) const { return direction == "reverse" || d == 1; }
};

/// Checks X (rank 3, layout 0: [seq, batch, input]; 1: [batch, seq, input]), W ([num_dir,
/// gates * hidden, input]), R ([num_dir, gates * hidden, hidden]), hidden_size, direction and
/// sequence_lens (input 4). Errors: kModelError naming the node and the offending shapes.
inline Expected<RnnSetup> read_rnn_setup(const KernelContext& ctx, const Tensor& x, const Tensor& w,
                                         const Tensor& r, int64_t gates) {
  RnnSetup s;
  s.layout = ctx.attr_int("layout", 0);
  const std::string shapes = " (X " + shape_to_string(x.shape()) + ", W " +
                             shape_to_string(w.shape()) + ", R " + shape_to_string(r.shape()) + ")";
  if (s.layout != 0 && s.layout != 1)
    return model_error(ctx.describe() + ": layout must be 0 or 1, got " + std::to_string(s.layout));
  if (x.rank() != 3 || w.rank() != 3 || r.rank() != 3)
    return model_error(ctx.describe() + ": X, W and R must have rank 3" + shapes);
  if (w.dtype() != x.dtype() || r.dtype() != x.dtype())
    return model_error(ctx.describe() + ": X, W and R must have the same element type");
  s.seq = x.dim(s.layout == 0 ? 0 : 1);
  s.batch = x.dim(s.layout == 0 ? 1 : 0);
  s.input = x.dim(2);
  s.hidden = r.dim(2);
  s.direction = ctx.attr_string("direction", "forward");
  if (s.direction != "forward" && s.direction != "reverse" && s.direction != "bidirectional")
    return model_error(ctx.describe() + ": unknown direction '" + s.direction + "'");
  s.num_dir = s.direction == "bidirectional" ? 2 : 1;
  if (ctx.has_attr("hidden_size") && ctx.attr_int("hidden_size", 0) != s.hidden)
    return model_error(ctx.describe() + ": hidden_size " +
                       std::to_string(ctx.attr_int("hidden_size", 0)) + " does not match R" +
                       shapes);
  if (w.dim(0) != s.num_dir || r.dim(0) != s.num_dir || w.dim(1) != gates * s.hidden ||
      r.dim(1) != gates * s.hidden || w.dim(2) != s.input)
    return model_error(ctx.describe() + ": expected W [" + std::to_string(s.num_dir) + ", " +
                       std::to_string(gates * s.hidden) + ", " + std::to_string(s.input) +
                       "] and R [" + std::to_string(s.num_dir) + ", " +
                       std::to_string(gates * s.hidden) + ", " + std::to_string(s.hidden) +
                       "] for direction " + s.direction + shapes);
  s.lens.assign(static_cast<size_t>(s.batch), s.seq);
  if (const Tensor* sl = ctx.input(4)) {
    if (sl->numel() != s.batch || !is_integer(sl->dtype()))
      return model_error(
          ctx.describe() + ": sequence_lens must hold one integer per batch entry (" +
          std::to_string(s.batch) + "), got " + std::string(dtype_name(sl->dtype())) +
          " of shape " + shape_to_string(sl->shape()));
    for (int64_t b = 0; b < s.batch; ++b) {
      const auto v = static_cast<int64_t>(sl->get_as_double(b));
      if (v < 0 || v > s.seq)
        return model_error(ctx.describe() + ": sequence_lens[" + std::to_string(b) + "] = " +
                           std::to_string(v) + " is outside [0, " + std::to_string(s.seq) + "]");
      s.lens[static_cast<size_t>(b)] = v;
    }
  }
  if (ctx.has_attr("clip")) {
    s.has_clip = true;
    s.clip = ctx.attr_float("clip", 0.0f);
  }
  return s;
}

/// X as a [seq, batch, input] buffer whatever the layout.
template <class T>
std::vector<T> rnn_seq_major_input(const Tensor& x, const RnnSetup& s) {
  const T* px = x.data<T>();
  if (s.layout == 0) return std::vector<T>(px, px + x.numel());
  std::vector<T> out(static_cast<size_t>(x.numel()));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t t = 0; t < s.seq; ++t)
      std::copy(px + (b * s.seq + t) * s.input, px + (b * s.seq + t + 1) * s.input,
                out.begin() + (t * s.batch + b) * s.input);
  return out;
}

/// An initial state input ([num_dir, batch, hidden], or [batch, num_dir, hidden] with layout 1)
/// as a [num_dir, batch, hidden] buffer; zeros when absent. Errors: kModelError on a bad shape.
template <class T>
Expected<std::vector<T>> rnn_initial_state(const KernelContext& ctx, const Tensor* t,
                                           const RnnSetup& s, const char* name) {
  std::vector<T> out(static_cast<size_t>(s.num_dir * s.batch * s.hidden), T(0));
  if (!t) return out;
  const Shape want =
      s.layout == 0 ? Shape{s.num_dir, s.batch, s.hidden} : Shape{s.batch, s.num_dir, s.hidden};
  if (t->shape() != want || t->dtype() != DTypeOf<T>::value)
    return model_error(ctx.describe() + ": " + name + " has shape " + shape_to_string(t->shape()) +
                       " and type " + std::string(dtype_name(t->dtype())) + ", expected " +
                       shape_to_string(want) + " of " + std::string(dtype_name(DTypeOf<T>::value)));
  const T* p = t->data<T>();
  for (int64_t d = 0; d < s.num_dir; ++d)
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.hidden; ++h)
        out[static_cast<size_t>((d * s.batch + b) * s.hidden + h)] =
            s.layout == 0 ? p[(d * s.batch + b) * s.hidden + h]
                          : p[(b * s.num_dir + d) * s.hidden + h];
  return out;
}

/// A per-direction parameter input of `width` values per direction (B, P) as a buffer; zeros when
/// absent. Errors: kModelError on a bad shape.
template <class T>
Expected<std::vector<T>> rnn_param(const KernelContext& ctx, const Tensor* t, const RnnSetup& s,
                                   int64_t width, const char* name) {
  std::vector<T> out(static_cast<size_t>(s.num_dir * width), T(0));
  if (!t) return out;
  if (t->shape() != Shape{s.num_dir, width} || t->dtype() != DTypeOf<T>::value)
    return model_error(ctx.describe() + ": " + name + " has shape " + shape_to_string(t->shape()) +
                       ", expected " + shape_to_string({s.num_dir, width}));
  const T* p = t->data<T>();
  std::copy(p, p + t->numel(), out.begin());
  return out;
}

/// Sets output `index` from a [seq, num_dir, batch, hidden] buffer, transposed to
/// [batch, seq, num_dir, hidden] for layout 1.
template <class T>
void rnn_set_sequence_output(KernelContext& ctx, size_t index, const std::vector<T>& y,
                             const RnnSetup& s) {
  if (!ctx.output_requested(index)) return;
  const Shape shape = s.layout == 0 ? Shape{s.seq, s.num_dir, s.batch, s.hidden}
                                    : Shape{s.batch, s.seq, s.num_dir, s.hidden};
  Tensor out(DTypeOf<T>::value, shape);
  T* po = out.data<T>();
  for (int64_t t = 0; t < s.seq; ++t)
    for (int64_t d = 0; d < s.num_dir; ++d)
      for (int64_t b = 0; b < s.batch; ++b) {
        const int64_t src = ((t * s.num_dir + d) * s.batch + b) * s.hidden;
        const int64_t dst = s.layout == 0 ? src : ((b * s.seq + t) * s.num_dir + d) * s.hidden;
        std::copy(y.begin() + src, y.begin() + src + s.hidden, po + dst);
      }
  ctx.set_output(index, std::move(out));
}

/// Sets output `index` from a [num_dir, batch, hidden] state buffer, transposed to
/// [batch, num_dir, hidden] for layout 1.
template <class T>
void rnn_set_state_output(KernelContext& ctx, size_t index, const std::vector<T>& h,
                          const RnnSetup& s) {
  if (!ctx.output_requested(index)) return;
  const Shape shape =
      s.layout == 0 ? Shape{s.num_dir, s.batch, s.hidden} : Shape{s.batch, s.num_dir, s.hidden};
  Tensor out(DTypeOf<T>::value, shape);
  T* po = out.data<T>();
  for (int64_t d = 0; d < s.num_dir; ++d)
    for (int64_t b = 0; b < s.batch; ++b) {
      const int64_t src = (d * s.batch + b) * s.hidden;
      const int64_t dst = s.layout == 0 ? src : (b * s.num_dir + d) * s.hidden;
      std::copy(h.begin() + src, h.begin() + src + s.hidden, po + dst);
    }
  ctx.set_output(index, std::move(out));
}

/// Clips a gate pre-activation to [-clip, clip] when the clip attribute is set.
inline double rnn_clip(const RnnSetup& s, double v) {
  return s.has_clip ? std::clamp(v, -s.clip, s.clip) : v;
}

}  // namespace onnxdbg::reference
