// LSTM (ONNX LSTM-1, -7, -14): forward, reverse or bidirectional, with optional bias, sequence
// lengths, initial states, peepholes, custom activations, clip, input_forget and layout; the input
// and recurrent projections are BLAS GEMMs, the gate math runs in double.
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/blas.h"
#include "reference/ops/rnn_common.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status lstm_typed(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor& r) {
  ODB_ASSIGN_OR_RETURN(RnnSetup s, read_rnn_setup(ctx, x, w, r, 4));
  ODB_ASSIGN_OR_RETURN(auto acts,
                       read_rnn_activations(ctx, s.num_dir, {"Sigmoid", "Tanh", "Tanh"}));
  const int64_t hs = s.hidden, g4 = 4 * hs, nb = s.batch;
  ODB_ASSIGN_OR_RETURN(auto bias, rnn_param<T>(ctx, ctx.input(3), s, 8 * hs, "B"));
  ODB_ASSIGN_OR_RETURN(auto h, rnn_initial_state<T>(ctx, ctx.input(5), s, "initial_h"));
  ODB_ASSIGN_OR_RETURN(auto c, rnn_initial_state<T>(ctx, ctx.input(6), s, "initial_c"));
  ODB_ASSIGN_OR_RETURN(auto peep, rnn_param<T>(ctx, ctx.input(7), s, 3 * hs, "P"));
  const bool input_forget = ctx.attr_int("input_forget", 0) != 0;
  const auto xs = rnn_seq_major_input<T>(x, s);
  std::vector<T> y(static_cast<size_t>(s.seq * s.num_dir * nb * hs), T(0));
  std::vector<T> xw(static_cast<size_t>(s.seq * nb * g4)), hr(static_cast<size_t>(nb * g4));
  for (int64_t d = 0; d < s.num_dir; ++d) {
    const T* wd = w.data<T>() + d * g4 * s.input;
    const T* rd = r.data<T>() + d * g4 * hs;
    ODB_RETURN_IF_ERROR(gemm<T>(false, true, s.seq * nb, g4, s.input, T(1), xs.data(), s.input, wd,
                                s.input, T(0), xw.data(), g4));
    T* hd = h.data() + d * nb * hs;
    T* cd = c.data() + d * nb * hs;
    const T* bw = bias.data() + d * 8 * hs;
    const T* br = bw + 4 * hs;
    const T* pd = peep.data() + d * 3 * hs;
    const RnnActivation &f = acts[static_cast<size_t>(3 * d)],
                        &g = acts[static_cast<size_t>(3 * d + 1)],
                        &ha = acts[static_cast<size_t>(3 * d + 2)];
    for (int64_t step = 0; step < s.seq; ++step) {
      ODB_RETURN_IF_ERROR(
          gemm<T>(false, true, nb, g4, hs, T(1), hd, hs, rd, hs, T(0), hr.data(), g4));
      for (int64_t b = 0; b < nb; ++b) {
        const int64_t len = s.lens[static_cast<size_t>(b)];
        if (step >= len) continue;
        const int64_t t = s.reverse(d) ? len - 1 - step : step;
        const T* xg = xw.data() + (t * nb + b) * g4;
        const T* hg = hr.data() + b * g4;
        for (int64_t j = 0; j < hs; ++j) {
          // Gate order in W, R and B: input, output, forget, cell.
          auto pre = [&](int64_t gate) {
            const int64_t k = gate * hs + j;
            return static_cast<double>(xg[k]) + hg[k] + bw[k] + br[k];
          };
          const double c_prev = cd[b * hs + j];
          const double i = f(rnn_clip(s, pre(0) + pd[j] * c_prev));
          const double fg =
              input_forget ? 1.0 - i : f(rnn_clip(s, pre(2) + pd[2 * hs + j] * c_prev));
          const double cc = g(rnn_clip(s, pre(3)));
          const double c_new = fg * c_prev + i * cc;
          const double o = f(rnn_clip(s, pre(1) + pd[hs + j] * c_new));
          const double h_new = o * ha(c_new);
          cd[b * hs + j] = static_cast<T>(c_new);
          hd[b * hs + j] = static_cast<T>(h_new);
          y[static_cast<size_t>(((t * s.num_dir + d) * nb + b) * hs + j)] = static_cast<T>(h_new);
        }
      }
    }
  }
  rnn_set_sequence_output(ctx, 0, y, s);
  rnn_set_state_output(ctx, 1, h, s);
  rnn_set_state_output(ctx, 2, c, s);
  return Status::ok();
}

Status lstm(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* w, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const Tensor* r, ctx.required_input(2));
  return visit_float(x->dtype(), "LSTM",
                     [&](auto tag) { return lstm_typed<decltype(tag)>(ctx, *x, *w, *r); });
}

}  // namespace

void register_lstm(KernelRegistry& r) {
  for (int v : {1, 7}) r.add("LSTM", v, lstm).accumulates_in_double();
  r.add("LSTM", 14, lstm).accumulates_in_double().through(22);
}

}  // namespace onnxdbg::reference
