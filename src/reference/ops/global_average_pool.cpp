// GlobalAveragePool (ONNX GlobalAveragePool-1): the mean of each N x C plane, keeping the spatial
// dims as 1.
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/pool_common.h"

namespace onnxdbg::reference {
namespace {

Status global_average_pool(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  return visit_float(x->dtype(), "GlobalAveragePool", [&](auto tag) {
    using T = decltype(tag);
    return global_pool<T>(ctx, *x, [](const T* p, int64_t n) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += p[i];
      return static_cast<T>(n > 0 ? sum / static_cast<double>(n) : 0.0);
    });
  });
}

}  // namespace

void register_global_average_pool(KernelRegistry& r) {
  r.add("GlobalAveragePool", 1, global_average_pool).accumulates_in_double().through(22);
}

}  // namespace onnxdbg::reference
