// DFT (ONNX DFT-17): discrete Fourier transform along `axis` (default 1; accepted [-r, -2] and
// [0, r-2], the last dim being the real/imaginary pair) of a real ([..., 1]) or complex
// ([..., 2]) signal. dft_length zero-pads or truncates; inverse uses the + sign and divides by the
// length (numpy.fft.ifft); onesided keeps the first floor(n/2) + 1 bins. Output [..., 2].
#include "reference/ops/signal_common.h"

namespace onnxdbg::reference {
namespace {

Status dft(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t r = x->rank();
  if (r < 2 || (x->dim(r - 1) != 1 && x->dim(r - 1) != 2))
    return model_error(ctx.describe() +
                       ": input must be [..., signal, 1] (real) or [..., signal, 2] "
                       "(complex), got shape " +
                       shape_to_string(x->shape()));
  const int64_t axis_attr = ctx.attr_int("axis", 1);
  const int64_t axis = axis_attr < 0 ? axis_attr + r : axis_attr;
  if (axis < 0 || axis > r - 2)
    return model_error(ctx.describe() + ": axis " + std::to_string(axis_attr) +
                       " is out of range for an input of rank " + std::to_string(r) +
                       " (the last dim holds real and imaginary parts)");
  const bool inverse = ctx.attr_int("inverse", 0) != 0, onesided = ctx.attr_int("onesided", 0) != 0;
  if (inverse && onesided)
    return unsupported(ctx.describe() + ": inverse with onesided output is not defined by DFT-17");
  const int64_t n_in = x->dim(axis);
  int64_t n = n_in;
  if (ctx.input(1)) {
    ODB_ASSIGN_OR_RETURN(n, scalar_int_of(ctx, *ctx.input(1), "dft_length"));
  }
  if (n < 1)
    return model_error(ctx.describe() + ": dft_length must be positive, got " + std::to_string(n));
  const int64_t n_out = onesided ? n / 2 + 1 : n;
  Shape out_shape = x->shape();
  out_shape[static_cast<size_t>(axis)] = n_out;
  out_shape.back() = 2;
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, x->dtype(), out_shape));
  const bool complex = x->dim(r - 1) == 2;
  const int64_t outer = dims_product(x->shape(), 0, static_cast<size_t>(axis));
  const int64_t inner =
      dims_product(x->shape(), static_cast<size_t>(axis) + 1, static_cast<size_t>(r - 1));
  std::vector<double> re(static_cast<size_t>(n_in)), im(static_cast<size_t>(n_in)),
      ore(static_cast<size_t>(n_out)), oim(static_cast<size_t>(n_out));
  const int64_t cw = x->dim(r - 1);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n_in; ++j) {
        const int64_t e = ((o * n_in + j) * inner + i) * cw;
        re[static_cast<size_t>(j)] = x->get_as_double(e);
        im[static_cast<size_t>(j)] = complex ? x->get_as_double(e + 1) : 0.0;
      }
      naive_dft(re.data(), im.data(), n_in, 1, n, inverse, n_out, ore.data(), oim.data());
      for (int64_t k = 0; k < n_out; ++k) {
        const int64_t e = ((o * n_out + k) * inner + i) * 2;
        y.set_from_double(e, ore[static_cast<size_t>(k)]);
        y.set_from_double(e + 1, oim[static_cast<size_t>(k)]);
      }
    }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_dft(KernelRegistry& r) { r.add("DFT", 17, dft).accumulates_in_double(); }

}  // namespace onnxdbg::reference
