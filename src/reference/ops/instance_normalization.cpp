// InstanceNormalization (ONNX versions 1, 6): each N x C plane is normalised by its own mean and
// variance, then scaled and shifted per channel: y = scale[c] * (x - mean) / sqrt(var + eps) +
// B[c].
#include <cmath>

#include "reference/kernel.h"
#include "reference/kernel_util.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status instance_norm_typed(KernelContext& ctx, const Tensor& x, const Tensor& scale,
                           const Tensor& bias) {
  const int64_t n = x.dim(0), c = x.dim(1), inner = n * c == 0 ? 0 : x.numel() / (n * c);
  if (scale.numel() != c || bias.numel() != c)
    return model_error(ctx.describe() + ": scale and B must have C = " + std::to_string(c) +
                       " elements (X " + shape_to_string(x.shape()) + ", scale " +
                       shape_to_string(scale.shape()) + ", B " + shape_to_string(bias.shape()) +
                       ")");
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), x.shape()));
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const T* xp = px + (b * c + ch) * inner;
      T* yp = py + (b * c + ch) * inner;
      double s = 0, sq = 0;
      for (int64_t i = 0; i < inner; ++i) s += xp[i];
      const double mean = inner > 0 ? s / static_cast<double>(inner) : 0.0;
      for (int64_t i = 0; i < inner; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
      const double var = inner > 0 ? sq / static_cast<double>(inner) : 0.0;
      const double a = scale.get_as_double(ch) / std::sqrt(var + eps), sh = bias.get_as_double(ch);
      for (int64_t i = 0; i < inner; ++i) yp[i] = static_cast<T>((xp[i] - mean) * a + sh);
    }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status instance_normalization(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const Tensor* bias, ctx.required_input(2));
  if (x->rank() < 3)
    return model_error(ctx.describe() + ": X must be N x C x D1 x ... (rank >= 3), got shape " +
                       shape_to_string(x->shape()));
  return visit_float(x->dtype(), "InstanceNormalization", [&](auto tag) {
    return instance_norm_typed<decltype(tag)>(ctx, *x, *scale, *bias);
  });
}

}  // namespace

void register_instance_normalization(KernelRegistry& r) {
  r.add("InstanceNormalization", 1, instance_normalization).accumulates_in_double();
  r.add("InstanceNormalization", 6, instance_normalization).accumulates_in_double().through(22);
}

}  // namespace onnxdbg::reference
