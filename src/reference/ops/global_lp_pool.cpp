// GlobalLpPool (ONNX GlobalLpPool-1, -2): (sum of |x|^p over each N x C plane)^(1/p); p is a float
// attribute in version 1 and an int from version 2 on (default 2).
#include <cmath>

#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/pool_common.h"

namespace onnxdbg::reference {
namespace {

Status global_lp_pool(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const auto* pa = ctx.find_attr("p");
  const double p = !pa                                         ? 2.0
                   : pa->type() == onnx::AttributeProto::FLOAT ? pa->f()
                                                               : static_cast<double>(pa->i());
  if (!(p > 0))
    return model_error(ctx.describe() + ": p must be positive, got " + std::to_string(p));
  return visit_float(x->dtype(), "GlobalLpPool", [&](auto tag) {
    using T = decltype(tag);
    return global_pool<T>(ctx, *x, [p](const T* v, int64_t n) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += std::pow(std::abs(static_cast<double>(v[i])), p);
      return static_cast<T>(std::pow(sum, 1.0 / p));
    });
  });
}

}  // namespace

void register_global_lp_pool(KernelRegistry& r) {
  r.add("GlobalLpPool", 1, global_lp_pool).accumulates_in_double();
  r.add("GlobalLpPool", 2, global_lp_pool).accumulates_in_double().through(22);
}

}  // namespace onnxdbg::reference
