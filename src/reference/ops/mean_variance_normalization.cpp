// MeanVarianceNormalization (ONNX versions 9, 13): y = (x - mean) / (sqrt(var) + 1e-9) with mean
// and (population) variance taken over `axes` (default [0, 2, 3]), as the op's function body says.
#include <cmath>

#include "reference/kernel.h"
#include "reference/kernel_util.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status mvn_typed(KernelContext& ctx, const Tensor& x) {
  auto axes = ctx.attr_ints("axes", {0, 2, 3});
  Shape reduced = x.shape();
  for (int64_t& a : axes) {
    ODB_ASSIGN_OR_RETURN(a, normalize_axis(a, x.rank(), "axes"));
    reduced[static_cast<size_t>(a)] = 1;
  }
  int64_t groups = 1;
  for (int64_t d : reduced) groups *= d;
  const int64_t count = groups == 0 ? 0 : x.numel() / groups;
  // Offset of each element's group (its index with the reduced axes set to 0).
  std::vector<int64_t> key(static_cast<size_t>(x.numel()));
  for_each_broadcast(x.shape(), {broadcast_strides(reduced, x.shape())},
                     [&](int64_t i, const int64_t* o) { key[static_cast<size_t>(i)] = o[0]; });
  const T* px = x.data<T>();
  std::vector<double> mean(static_cast<size_t>(groups), 0.0), var(static_cast<size_t>(groups), 0.0);
  for (int64_t i = 0; i < x.numel(); ++i)
    mean[static_cast<size_t>(key[static_cast<size_t>(i)])] += px[i];
  for (double& m : mean) m /= static_cast<double>(count);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto k = static_cast<size_t>(key[static_cast<size_t>(i)]);
    var[k] += (px[i] - mean[k]) * (px[i] - mean[k]);
  }
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), x.shape()));
  T* py = y.data<T>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto k = static_cast<size_t>(key[static_cast<size_t>(i)]);
    py[i] =
        static_cast<T>((px[i] - mean[k]) / (std::sqrt(var[k] / static_cast<double>(count)) + 1e-9));
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status mean_variance_normalization(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  return visit_float(x->dtype(), "MeanVarianceNormalization",
                     [&](auto tag) { return mvn_typed<decltype(tag)>(ctx, *x); });
}

}  // namespace

void register_mean_variance_normalization(KernelRegistry& r) {
  r.add("MeanVarianceNormalization", 9, mean_variance_normalization).accumulates_in_double();
  r.add("MeanVarianceNormalization", 13, mean_variance_normalization).accumulates_in_double();
}

}  // namespace onnxdbg::reference
