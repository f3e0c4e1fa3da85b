// GRU (ONNX GRU-1, -3, -7, -14): forward, reverse or bidirectional, with optional bias, sequence
// lengths, initial state, custom activations, clip, linear_before_reset and layout; projections
// are BLAS GEMMs, the gate math runs in double.
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/blas.h"
#include "reference/ops/rnn_common.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status gru_typed(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor& r) {
  ODB_ASSIGN_OR_RETURN(RnnSetup s, read_rnn_setup(ctx, x, w, r, 3));
  ODB_ASSIGN_OR_RETURN(auto acts, read_rnn_activations(ctx, s.num_dir, {"Sigmoid", "Tanh"}));
  const int64_t hs = s.hidden, g3 = 3 * hs, nb = s.batch;
  ODB_ASSIGN_OR_RETURN(auto bias, rnn_param<T>(ctx, ctx.input(3), s, 6 * hs, "B"));
  ODB_ASSIGN_OR_RETURN(auto h, rnn_initial_state<T>(ctx, ctx.input(5), s, "initial_h"));
  const bool lbr = ctx.attr_int("linear_before_reset", 0) != 0;
  const auto xs = rnn_seq_major_input<T>(x, s);
  std::vector<T> y(static_cast<size_t>(s.seq * s.num_dir * nb * hs), T(0));
  std::vector<T> xw(static_cast<size_t>(s.seq * nb * g3)), hr(static_cast<size_t>(nb * g3));
  std::vector<T> z(static_cast<size_t>(nb * hs)), rh(static_cast<size_t>(nb * hs), T(0)),
      rhr(static_cast<size_t>(nb * hs));
  for (int64_t d = 0; d < s.num_dir; ++d) {
    const T* wd = w.data<T>() + d * g3 * s.input;
    const T* rd = r.data<T>() + d * g3 * hs;
    ODB_RETURN_IF_ERROR(gemm<T>(false, true, s.seq * nb, g3, s.input, T(1), xs.data(), s.input, wd,
                                s.input, T(0), xw.data(), g3));
    T* hd = h.data() + d * nb * hs;
    const T* bw = bias.data() + d * 6 * hs;
    const T* br = bw + 3 * hs;
    const RnnActivation &f = acts[static_cast<size_t>(2 * d)],
                        &g = acts[static_cast<size_t>(2 * d + 1)];
    auto time_of = [&](int64_t b, int64_t step) {
      const int64_t len = s.lens[static_cast<size_t>(b)];
      return step >= len ? -1 : s.reverse(d) ? len - 1 - step : step;
    };
    for (int64_t step = 0; step < s.seq; ++step) {
      // Gate order in W, R and B: update (z), reset (r), hidden (h). Without linear_before_reset
      // the hidden gate needs (r . H) x Rh^T, so only the z and r rows of R are applied here.
      ODB_RETURN_IF_ERROR(gemm<T>(false, true, nb, lbr ? g3 : 2 * hs, hs, T(1), hd, hs, rd, hs,
                                  T(0), hr.data(), g3));
      for (int64_t b = 0; b < nb; ++b) {
        const int64_t t = time_of(b, step);
        if (t < 0) continue;
        const T* xg = xw.data() + (t * nb + b) * g3;
        const T* hg = hr.data() + b * g3;
        for (int64_t j = 0; j < hs; ++j) {
          const double zv = f(rnn_clip(s, static_cast<double>(xg[j]) + hg[j] + bw[j] + br[j]));
          const int64_t k = hs + j;
          const double rv = f(rnn_clip(s, static_cast<double>(xg[k]) + hg[k] + bw[k] + br[k]));
          z[static_cast<size_t>(b * hs + j)] = static_cast<T>(zv);
          // With linear_before_reset rh holds r itself, otherwise r . H_prev.
          rh[static_cast<size_t>(b * hs + j)] = static_cast<T>(lbr ? rv : rv * hd[b * hs + j]);
        }
      }
      if (!lbr)
        ODB_RETURN_IF_ERROR(gemm<T>(false, true, nb, hs, hs, T(1), rh.data(), hs, rd + 2 * hs * hs,
                                    hs, T(0), rhr.data(), hs));
      for (int64_t b = 0; b < nb; ++b) {
        const int64_t t = time_of(b, step);
        if (t < 0) continue;
        const T* xg = xw.data() + (t * nb + b) * g3;
        const T* hg = hr.data() + b * g3;
        for (int64_t j = 0; j < hs; ++j) {
          const int64_t k = 2 * hs + j;
          const auto bj = static_cast<size_t>(b * hs + j);
          const double rec =
              lbr ? static_cast<double>(rh[bj]) * (static_cast<double>(hg[k]) + br[k])
                  : static_cast<double>(rhr[bj]) + br[k];
          const double ht = g(rnn_clip(s, static_cast<double>(xg[k]) + bw[k] + rec));
          const double zv = z[bj];
          const double h_new = (1.0 - zv) * ht + zv * hd[b * hs + j];
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

Status gru(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* w, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const Tensor* r, ctx.required_input(2));
  return visit_float(x->dtype(), "GRU",
                     [&](auto tag) { return gru_typed<decltype(tag)>(ctx, *x, *w, *r); });
}

}  // namespace

void register_gru(KernelRegistry& r) {
  for (int v : {1, 3, 7}) r.add("GRU", v, gru).accumulates_in_double();
  r.add("GRU", 14, gru).accumulates_in_double().through(22);
}

}  // namespace onnxdbg::reference
