// BatchNormalization (ONNX versions 1, 6, 7, 9, 14, 15): y = scale * (x - mean) / sqrt(var + eps)
// + B per channel. Inference uses the given statistics; training mode (training_mode = 1 from
// version 14, extra outputs requested before it) normalises with the batch statistics and also
// returns the updated running statistics (and, before 14, the batch mean and variance).
#include <algorithm>
#include <cmath>

#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/parallel.h"

namespace onnxdbg::reference {
namespace {

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.get_as_double(i);
  return v;
}

Expected<Tensor> from_doubles(DType dtype, const Shape& shape, const std::vector<double>& v) {
  ODB_ASSIGN_OR_RETURN(Tensor t, Tensor::make(dtype, shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, v[static_cast<size_t>(i)]);
  return t;
}

// y[i] = (x[i] - mu) * a + b in double, rounded once to T. The AVX2 clone computes the same
// double operations four at a time (no FMA: GCC contracts nothing without -mfma), so both
// clones give the same bits.
#define ODB_NORMALIZE_ROW(T)                                                              \
  [[gnu::target_clones("avx2", "default")]] void normalize_row(                           \
      const T* __restrict x, T* __restrict y, int64_t n, double mu, double a, double b) { \
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>((x[i] - mu) * a + b);           \
  }
ODB_NORMALIZE_ROW(float)
ODB_NORMALIZE_ROW(double)
#undef ODB_NORMALIZE_ROW

template <class T>
Status batch_norm_typed(KernelContext& ctx, const Tensor& x, const std::vector<const Tensor*>& p) {
  const int64_t n = x.dim(0), c = x.dim(1), inner = c == 0 || n == 0 ? 0 : x.numel() / (n * c);
  const double eps = ctx.attr_float("epsilon", 1e-5f), momentum = ctx.attr_float("momentum", 0.9f);
  bool training = false;
  if (ctx.opset() >= 14) {
    training = ctx.attr_int("training_mode", 0) != 0;
  } else {
    for (size_t i = 1; i < 5; ++i) training = training || ctx.output_requested(i);
    if (ctx.opset() < 7 && ctx.attr_int("is_test", 0) != 0) training = false;
  }
  // Parameters are per channel, or (spatial = 0 before version 9) per element of a sample.
  const int64_t pn = p[0]->numel();
  std::string shapes = " (X " + shape_to_string(x.shape());
  for (const Tensor* t : p) shapes += ", " + shape_to_string(t->shape());
  shapes += ")";
  for (const Tensor* t : p)
    if (t->numel() != pn || (pn != c && pn != c * inner))
      return model_error(ctx.describe() + ": scale, B, mean and var must each have C = " +
                         std::to_string(c) + " elements" + shapes);
  const bool per_element = pn != c;
  if (per_element && training)
    return unsupported(ctx.describe() + ": training mode with spatial = 0 is not supported");
  auto scale = as_doubles(*p[0]), bias = as_doubles(*p[1]), mean = as_doubles(*p[2]),
       var = as_doubles(*p[3]);
  std::vector<double> batch_mean, batch_var;
  const T* px = x.data<T>();
  if (training) {
    batch_mean.assign(static_cast<size_t>(c), 0.0);
    batch_var.assign(static_cast<size_t>(c), 0.0);
    const double count = static_cast<double>(n * inner);
    for (int64_t ch = 0; ch < c; ++ch) {
      double s = 0, sq = 0;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < inner; ++i) s += px[(b * c + ch) * inner + i];
      const double mu = count > 0 ? s / count : 0.0;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < inner; ++i) {
          const double d = px[(b * c + ch) * inner + i] - mu;
          sq += d * d;
        }
      batch_mean[static_cast<size_t>(ch)] = mu;
      batch_var[static_cast<size_t>(ch)] = count > 0 ? sq / count : 0.0;
    }
  }
  const auto& use_mean = training ? batch_mean : mean;
  const auto& use_var = training ? batch_var : var;
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make_uninitialized(x.dtype(), x.shape()));
  T* py = y.data<T>();
  // The factor scale / sqrt(var + eps) of each parameter, computed once.
  std::vector<double> factor(static_cast<size_t>(pn));
  for (size_t k = 0; k < factor.size(); ++k) factor[k] = scale[k] / std::sqrt(use_var[k] + eps);
  // Tasks of whole (image, channel) planes, about kElementwiseGrain elements each.
  const int64_t per_task = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(inner, 1));
  parallel_range(n * c, per_task, [&](int64_t first, int64_t last) {
    for (int64_t plane = first; plane < last; ++plane) {
      const int64_t ch = plane % c;
      const T* xs = px + plane * inner;
      T* ys = py + plane * inner;
      if (per_element) {
        const size_t k0 = static_cast<size_t>(ch * inner);
        for (int64_t i = 0; i < inner; ++i) {
          const size_t k = k0 + static_cast<size_t>(i);
          ys[i] = static_cast<T>((xs[i] - use_mean[k]) * factor[k] + bias[k]);
        }
      } else {
        const auto k = static_cast<size_t>(ch);
        normalize_row(xs, ys, inner, use_mean[k], factor[k], bias[k]);
      }
    }
  });
  ctx.set_output(0, std::move(y));

  std::vector<double> run_mean = mean, run_var = var;
  if (training)
    for (size_t k = 0; k < run_mean.size(); ++k) {
      run_mean[k] = mean[k] * momentum + batch_mean[k] * (1 - momentum);
      run_var[k] = var[k] * momentum + batch_var[k] * (1 - momentum);
    }
  const std::vector<double>* extra[] = {&run_mean, &run_var, training ? &batch_mean : &mean,
                                        training ? &batch_var : &var};
  for (size_t i = 1; i < 5 && i < ctx.num_outputs(); ++i) {
    if (!ctx.output_requested(i)) continue;
    ODB_ASSIGN_OR_RETURN(Tensor t, from_doubles(p[2]->dtype(), p[2]->shape(), *extra[i - 1]));
    ctx.set_output(i, std::move(t));
  }
  return Status::ok();
}

Status batch_normalization(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  std::vector<const Tensor*> params;
  for (size_t i = 1; i < 5; ++i) {
    ODB_ASSIGN_OR_RETURN(const Tensor* t, ctx.required_input(i));
    params.push_back(t);
  }
  if (x->rank() < 2)
    return model_error(ctx.describe() + ": X must be N x C x ..., got shape " +
                       shape_to_string(x->shape()));
  return visit_float(x->dtype(), "BatchNormalization",
                     [&](auto tag) { return batch_norm_typed<decltype(tag)>(ctx, *x, params); });
}

}  // namespace

void register_batch_normalization(KernelRegistry& r) {
  for (int v : {1, 6, 7, 9, 14, 15})
    r.add("BatchNormalization", v, batch_normalization).accumulates_in_double();
}

}  // namespace onnxdbg::reference
