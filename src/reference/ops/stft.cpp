// STFT (ONNX STFT-17): short-time Fourier transform of signal [batch, length, 1 or 2] with frames
// of frame_length (the window's length when omitted) every frame_step samples, each multiplied by
// the optional window. Output [batch, frames, bins, 2] with frames = 1 + (length - frame_length)
// / frame_step and bins = frame_length / 2 + 1 when onesided (default), else frame_length.
#include "reference/ops/signal_common.h"

namespace onnxdbg::reference {
namespace {

Status stft(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->rank() != 3 || (x->dim(2) != 1 && x->dim(2) != 2))
    return model_error(ctx.describe() + ": signal must be [batch, length, 1 or 2], got shape " +
                       shape_to_string(x->shape()));
  ODB_ASSIGN_OR_RETURN(const Tensor* step_t, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const int64_t step, scalar_int_of(ctx, *step_t, "frame_step"));
  const Tensor* window = ctx.input(2);
  if (window && window->rank() != 1)
    return model_error(ctx.describe() + ": window must be 1-D, got shape " +
                       shape_to_string(window->shape()));
  int64_t frame = window ? window->dim(0) : 0;
  if (ctx.input(3)) {
    ODB_ASSIGN_OR_RETURN(frame, scalar_int_of(ctx, *ctx.input(3), "frame_length"));
    if (window && window->dim(0) != frame)
      return model_error(ctx.describe() + ": frame_length " + std::to_string(frame) +
                         " differs from the window's length " + std::to_string(window->dim(0)));
  }
  const int64_t batch = x->dim(0), len = x->dim(1), cw = x->dim(2);
  if (frame < 1 || frame > len || step < 1)
    return model_error(ctx.describe() +
                       ": needs 1 <= frame_length <= signal length and frame_step >= 1, got "
                       "frame_length " +
                       std::to_string(frame) + ", signal length " + std::to_string(len) +
                       ", frame_step " + std::to_string(step));
  const bool onesided = ctx.attr_int("onesided", 1) != 0;
  const int64_t frames = 1 + (len - frame) / step, bins = onesided ? frame / 2 + 1 : frame;
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, x->dtype(), {batch, frames, bins, 2}));
  std::vector<double> re(static_cast<size_t>(frame)), im(static_cast<size_t>(frame)),
      ore(static_cast<size_t>(bins)), oim(static_cast<size_t>(bins));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t j = 0; j < frame; ++j) {
        const double wv = window ? window->get_as_double(j) : 1.0;
        const int64_t e = (b * len + f * step + j) * cw;
        re[static_cast<size_t>(j)] = x->get_as_double(e) * wv;
        im[static_cast<size_t>(j)] = cw == 2 ? x->get_as_double(e + 1) * wv : 0.0;
      }
      naive_dft(re.data(), im.data(), frame, 1, frame, false, bins, ore.data(), oim.data());
      for (int64_t k = 0; k < bins; ++k) {
        const int64_t e = ((b * frames + f) * bins + k) * 2;
        y.set_from_double(e, ore[static_cast<size_t>(k)]);
        y.set_from_double(e + 1, oim[static_cast<size_t>(k)]);
      }
    }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_stft(KernelRegistry& r) { r.add("STFT", 17, stft).accumulates_in_double(); }

}  // namespace onnxdbg::reference
