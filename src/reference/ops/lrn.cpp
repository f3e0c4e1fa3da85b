// LRN (ONNX LRN-1, -13): local response normalisation across channels,
// y = x / (bias + alpha / size * sum of x^2 over channels [c - floor((size-1)/2), c +
// ceil((size-1)/2)])^beta.
#include <cmath>

#include "reference/kernel.h"
#include "reference/kernel_util.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status lrn_typed(KernelContext& ctx, const Tensor& x) {
  const int64_t size = ctx.attr_int("size", 0);
  if (size < 1)
    return model_error(ctx.describe() + ": the required attribute size must be positive, got " +
                       std::to_string(size));
  const double alpha = ctx.attr_float("alpha", 1e-4f), beta = ctx.attr_float("beta", 0.75f),
               bias = ctx.attr_float("bias", 1.0f);
  const int64_t n = x.dim(0), c = x.dim(1), inner = n * c == 0 ? 0 : x.numel() / (n * c);
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), x.shape()));
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
          const double v = px[(b * c + k) * inner + i];
          sq += v * v;
        }
        const int64_t off = (b * c + ch) * inner + i;
        py[off] =
            static_cast<T>(px[off] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status lrn(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->rank() < 2)
    return model_error(ctx.describe() + ": X must be N x C x ..., got shape " +
                       shape_to_string(x->shape()));
  return visit_float(x->dtype(), "LRN",
                     [&](auto tag) { return lrn_typed<decltype(tag)>(ctx, *x); });
}

}  // namespace

void register_lrn(KernelRegistry& r) {
  r.add("LRN", 1, lrn).accumulates_in_double();
  r.add("LRN", 13, lrn).accumulates_in_double();
}

}  // namespace onnxdbg::reference
