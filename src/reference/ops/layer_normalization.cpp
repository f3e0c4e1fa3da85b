// LayerNormalization (ONNX LayerNormalization-17): normalises over the dims from `axis` on,
// y = (x - mean) * InvStdDev * Scale + B, with Scale and B broadcast to those dims; the optional
// Mean and InvStdDev outputs have X's leading dims and 1s after, in the stash_type precision.
#include <cmath>

#include "reference/kernel.h"
#include "reference/kernel_util.h"

namespace onnxdbg::reference {
namespace {

// Values of `t` broadcast to `shape` (unidirectionally), as doubles in row-major order.
Expected<std::vector<double>> expand_to(const KernelContext& ctx, const Tensor& t,
                                        const Shape& shape, const char* what,
                                        const Shape& x_shape) {
  auto bs = broadcast_shapes({t.shape(), shape});
  if (!bs || *bs != shape)
    return model_error(ctx.describe() + ": " + what + " of shape " + shape_to_string(t.shape()) +
                       " does not broadcast to the normalized shape " + shape_to_string(shape) +
                       " of X " + shape_to_string(x_shape));
  std::vector<double> v;
  v.reserve(static_cast<size_t>(t.numel()));
  for_each_broadcast(shape, {broadcast_strides(t.shape(), shape)},
                     [&](int64_t, const int64_t* o) { v.push_back(t.get_as_double(o[0])); });
  return v;
}

template <class T>
Status layer_norm_typed(KernelContext& ctx, const Tensor& x, const Tensor& scale,
                        const Tensor* bias) {
  ODB_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", -1), x.rank()));
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  const int64_t stash = ctx.attr_int("stash_type", 1);
  Shape norm_shape(x.shape().begin() + axis, x.shape().end());
  int64_t inner = 1;
  for (int64_t d : norm_shape) inner *= d;
  const int64_t outer = inner == 0 ? 0 : x.numel() / inner;
  ODB_ASSIGN_OR_RETURN(auto sc, expand_to(ctx, scale, norm_shape, "Scale", x.shape()));
  std::vector<double> bi(static_cast<size_t>(inner), 0.0);
  if (bias) {
    ODB_ASSIGN_OR_RETURN(bi, expand_to(ctx, *bias, norm_shape, "B", x.shape()));
  }
  Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
  stat_shape.resize(x.shape().size(), 1);
  const DType stat_type = stash == 11 ? DType::kDouble : DType::kFloat;
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), x.shape()));
  ODB_ASSIGN_OR_RETURN(Tensor mean_t, Tensor::make(stat_type, stat_shape));
  ODB_ASSIGN_OR_RETURN(Tensor inv_t, Tensor::make(stat_type, stat_shape));
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (int64_t r = 0; r < outer; ++r) {
    const T* xr = px + r * inner;
    T* yr = py + r * inner;
    double s = 0, sq = 0;
    for (int64_t i = 0; i < inner; ++i) s += xr[i];
    const double mean = s / static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
    for (int64_t i = 0; i < inner; ++i) {
      const auto k = static_cast<size_t>(i);
      yr[i] = static_cast<T>((xr[i] - mean) * inv * sc[k] + bi[k]);
    }
    mean_t.set_from_double(r, mean);
    inv_t.set_from_double(r, inv);
  }
  ctx.set_output(0, std::move(y));
  if (ctx.output_requested(1)) ctx.set_output(1, std::move(mean_t));
  if (ctx.output_requested(2)) ctx.set_output(2, std::move(inv_t));
  return Status::ok();
}

Status layer_normalization(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required_input(1));
  if (x->rank() < 1) return model_error(ctx.describe() + ": X must have rank >= 1, got a scalar");
  return visit_float(x->dtype(), "LayerNormalization", [&](auto tag) {
    return layer_norm_typed<decltype(tag)>(ctx, *x, *scale, ctx.input(2));
  });
}

}  // namespace

void register_layer_normalization(KernelRegistry& r) {
  r.add("LayerNormalization", 17, layer_normalization).accumulates_in_double();
}

}  // namespace onnxdbg::reference
