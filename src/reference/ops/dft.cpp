// DFT (ONNX DFT-17 and DFT-20): discrete Fourier transform along one axis ([-r, -2] or [0, r-2],
// the last dim being the real/imaginary pair) of a real ([..., 1]) or complex ([..., 2]) signal.
// DFT-17 takes the axis as an attribute (default 1), DFT-20 as optional input 2 (default -2).
// dft_length zero-pads or truncates; inverse uses the + sign and divides by the length
// (numpy.fft.ifft); onesided keeps the first floor(n/2) + 1 bins (numpy.fft.rfft), and with
// inverse takes those bins of a Hermitian spectrum to a real signal of dft_length samples, by
// default 2 * (bins - 1) (numpy.fft.irfft). Output [..., 2], or [..., 1] for that inverse.
#include "reference/ops/signal_common.h"

namespace onnxdbg::reference {
namespace {

/// The transform along `axis_value` (as given: negative counts from the back), shared by both
/// versions; the attributes and dft_length (input 1) are the same in both.
Status dft_along(KernelContext& ctx, int64_t axis_value) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t r = x->rank();
  if (r < 2 || (x->dim(r - 1) != 1 && x->dim(r - 1) != 2))
    return model_error(ctx.describe() +
                       ": input must be [..., signal, 1] (real) or [..., signal, 2] "
                       "(complex), got shape " +
                       shape_to_string(x->shape()));
  const int64_t axis = axis_value < 0 ? axis_value + r : axis_value;
  if (axis < 0 || axis > r - 2)
    return model_error(ctx.describe() + ": axis " + std::to_string(axis_value) +
                       " is out of range for an input of rank " + std::to_string(r) +
                       " (the last dim holds real and imaginary parts)");
  const bool inverse = ctx.attr_int("inverse", 0) != 0, onesided = ctx.attr_int("onesided", 0) != 0;
  const bool complex = x->dim(r - 1) == 2;
  // onesided + inverse is the real inverse (IRFFT): a Hermitian half spectrum in, real samples out.
  const bool irfft = inverse && onesided;
  if (irfft && !complex)
    return model_error(ctx.describe() +
                       ": inverse with onesided output (IRFFT) takes a complex input [..., 2], "
                       "got shape " +
                       shape_to_string(x->shape()));
  const int64_t n_in = x->dim(axis);
  int64_t n = irfft ? 2 * (n_in - 1) : n_in;
  if (ctx.input(1)) {
    ODB_ASSIGN_OR_RETURN(n, scalar_int_of(ctx, *ctx.input(1), "dft_length"));
  }
  if (n < 1)
    return model_error(ctx.describe() + ": dft_length must be positive, got " + std::to_string(n) +
                       (irfft && !ctx.input(1) ? " (2 * (bins - 1) of a one-bin spectrum)" : ""));
  const int64_t n_out = onesided && !inverse ? n / 2 + 1 : n;
  Shape out_shape = x->shape();
  out_shape[static_cast<size_t>(axis)] = n_out;
  out_shape.back() = irfft ? 1 : 2;
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, x->dtype(), out_shape));
  const int64_t outer = dims_product(x->shape(), 0, static_cast<size_t>(axis));
  const int64_t inner =
      dims_product(x->shape(), static_cast<size_t>(axis) + 1, static_cast<size_t>(r - 1));
  // The samples the transform reads: the input's (zero-padded or truncated by naive_dft), or for
  // IRFFT the full spectrum of n bins, X[n - k] = conj(X[k]) past the half the input gives.
  const int64_t n_src = irfft ? n : n_in;
  std::vector<double> re(static_cast<size_t>(n_src)), im(static_cast<size_t>(n_src)),
      ore(static_cast<size_t>(n_out)), oim(static_cast<size_t>(n_out));
  const int64_t cw = x->dim(r - 1);
  const int64_t out_cw = out_shape.back();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n_src; ++j) {
        int64_t src = j;
        double conj = 1.0;
        if (irfft && j > n / 2) {
          src = n - j;
          conj = -1.0;
        }
        if (src >= n_in) {  // a bin past the ones given: zero padding
          re[static_cast<size_t>(j)] = im[static_cast<size_t>(j)] = 0.0;
          continue;
        }
        const int64_t e = ((o * n_in + src) * inner + i) * cw;
        re[static_cast<size_t>(j)] = x->get_as_double(e);
        im[static_cast<size_t>(j)] = complex ? conj * x->get_as_double(e + 1) : 0.0;
      }
      naive_dft(re.data(), im.data(), n_src, 1, n, inverse, n_out, ore.data(), oim.data());
      for (int64_t k = 0; k < n_out; ++k) {
        // IRFFT keeps the real part: the imaginary parts of bins 0 and n/2, which a Hermitian
        // spectrum cannot have, are dropped as numpy.fft.irfft drops them.
        const int64_t e = ((o * n_out + k) * inner + i) * out_cw;
        y.set_from_double(e, ore[static_cast<size_t>(k)]);
        if (!irfft) y.set_from_double(e + 1, oim[static_cast<size_t>(k)]);
      }
    }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status dft_17(KernelContext& ctx) { return dft_along(ctx, ctx.attr_int("axis", 1)); }

Status dft_20(KernelContext& ctx) {
  int64_t axis = -2;
  if (ctx.input(2)) {
    ODB_ASSIGN_OR_RETURN(axis, scalar_int_of(ctx, *ctx.input(2), "axis"));
  }
  return dft_along(ctx, axis);
}

}  // namespace

void register_dft(KernelRegistry& r) {
  r.add("DFT", 17, dft_17).accumulates_in_double();
  r.add("DFT", 20, dft_20).accumulates_in_double();
}

}  // namespace onnxdbg::reference
