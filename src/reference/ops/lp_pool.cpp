// LpPool (ONNX LpPool-1, -2, -11): y = (sum over the window of |x|^p)^(1/p), padding counting as 0.
// LpPool-1 stores p as a float attribute, later versions as an int.
#include <cmath>

#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/pool_common.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status lp_pool_typed(KernelContext& ctx, const Tensor& x, const Shape& kernel, double p) {
  ODB_ASSIGN_OR_RETURN(PoolSetup ps, pool_setup(ctx, x, kernel));
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), ps.out_shape));
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for_each_pool_window(ps, [&](const PoolWindow& w) {
    const T* xp = px + w.in_base;
    double sum = 0;
    for (int64_t q = 0; q < w.count; ++q)
      sum += std::pow(std::abs(static_cast<double>(xp[w.offsets[q]])), p);
    py[w.out] = static_cast<T>(std::pow(sum, 1.0 / p));
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status lp_pool(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(Shape kernel, read_pool_kernel(ctx, *x));
  const auto* pa = ctx.find_attr("p");
  const double p = !pa                                         ? 2.0
                   : pa->type() == onnx::AttributeProto::FLOAT ? pa->f()
                                                               : static_cast<double>(pa->i());
  if (!(p > 0))
    return model_error(ctx.describe() + ": p must be positive, got " + std::to_string(p));
  return visit_float(x->dtype(), "LpPool",
                     [&](auto tag) { return lp_pool_typed<decltype(tag)>(ctx, *x, kernel, p); });
}

}  // namespace

void register_lp_pool(KernelRegistry& r) {
  for (int v : {1, 2}) r.add("LpPool", v, lp_pool).accumulates_in_double();
  // LpPool-18 added `ceil_mode` and `dilations`, which pool_common implements for every version;
  // 22 added bfloat16.
  r.add("LpPool", 11, lp_pool).accumulates_in_double().through(22);
}

}  // namespace onnxdbg::reference
