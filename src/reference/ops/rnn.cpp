// RNN (ONNX RNN-1, -7, -14): the simple recurrent cell H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb),
// forward, reverse or bidirectional, with sequence lengths, initial state, activations, clip and
// layout; projections are BLAS GEMMs.
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/blas.h"
#include "reference/ops/rnn_common.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status rnn_typed(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor& r) {
  ODB_ASSIGN_OR_RETURN(RnnSetup s, read_rnn_setup(ctx, x, w, r, 1));
  ODB_ASSIGN_OR_RETURN(auto acts, read_rnn_activations(ctx, s.num_dir, {"Tanh"}));
  const int64_t hs = s.hidden, nb = s.batch;
  ODB_ASSIGN_OR_RETURN(auto bias, rnn_param<T>(ctx, ctx.input(3), s, 2 * hs, "B"));
  ODB_ASSIGN_OR_RETURN(auto h, rnn_initial_state<T>(ctx, ctx.input(5), s, "initial_h"));
  const auto xs = rnn_seq_major_input<T>(x, s);
  std::vector<T> y(static_cast<size_t>(s.seq * s.num_dir * nb * hs), T(0));
  std::vector<T> xw(static_cast<size_t>(s.seq * nb * hs)), hr(static_cast<size_t>(nb * hs));
  for (int64_t d = 0; d < s.num_dir; ++d) {
    ODB_RETURN_IF_ERROR(gemm<T>(false, true, s.seq * nb, hs, s.input, T(1), xs.data(), s.input,
                                w.data<T>() + d * hs * s.input, s.input, T(0), xw.data(), hs));
    const T* rd = r.data<T>() + d * hs * hs;
    T* hd = h.data() + d * nb * hs;
    const T* bw = bias.data() + d * 2 * hs;
    const T* br = bw + hs;
    const RnnActivation& f = acts[static_cast<size_t>(d)];
    for (int64_t step = 0; step < s.seq; ++step) {
      ODB_RETURN_IF_ERROR(
          gemm<T>(false, true, nb, hs, hs, T(1), hd, hs, rd, hs, T(0), hr.data(), hs));
      for (int64_t b = 0; b < nb; ++b) {
        const int64_t len = s.lens[static_cast<size_t>(b)];
        if (step >= len) continue;
        const int64_t t = s.reverse(d) ? len - 1 - step : step;
        for (int64_t j = 0; j < hs; ++j) {
          const double h_new =
              f(rnn_clip(s, static_cast<double>(xw[static_cast<size_t>((t * nb + b) * hs + j)]) +
                                hr[static_cast<size_t>(b * hs + j)] + bw[j] + br[j]));
          hd[b * hs + j] = static_cast<T>(h_new);
          y[static_cast<size_t>(((t * s.num_dir + d) * nb + b) * hs + j)] = static_cast<T>(h_new);
        }
      }
    }
  }
  rnn_set_sequence_output(ctx, 0, y, s);
  rnn_set_state_output(ctx, 1, h, s);
  return Status::ok();
}

Status rnn(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* w, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const Tensor* r, ctx.required_input(2));
  return visit_float(x->dtype(), "RNN",
                     [&](auto tag) { return rnn_typed<decltype(tag)>(ctx, *x, *w, *r); });
}

}  // namespace

void register_rnn(KernelRegistry& r) {
  for (int v : {1, 7}) r.add("RNN", v, rnn).accumulates_in_double();
  r.add("RNN", 14, rnn).accumulates_in_double().through(22);
}

}  // namespace onnxdbg::reference
