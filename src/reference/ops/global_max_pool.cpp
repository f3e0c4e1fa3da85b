// GlobalMaxPool (ONNX GlobalMaxPool-1): the maximum of each N x C plane, keeping the spatial dims
// as 1; a NaN in the plane gives NaN.
#include <cmath>

#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/pool_common.h"

namespace onnxdbg::reference {
namespace {

Status global_max_pool(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  return visit_float(x->dtype(), "GlobalMaxPool", [&](auto tag) {
    using T = decltype(tag);
    return global_pool<T>(ctx, *x, [](const T* p, int64_t n) {
      T best = n > 0 ? p[0] : T(0);
      for (int64_t i = 1; i < n; ++i)
        if (p[i] > best || std::isnan(p[i])) best = p[i];
      return best;
    });
  });
}

}  // namespace

void register_global_max_pool(KernelRegistry& r) {
  r.add("GlobalMaxPool", 1, global_max_pool).through(22);
}

}  // namespace onnxdbg::reference
