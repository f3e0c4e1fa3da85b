// Min: elementwise minimum of one or more inputs with numpy broadcasting (Min-1/6/8/12/13; before
// opset 8 the shapes had to be equal, a case the broadcasting kernel also covers). NaN propagates.
#include <cmath>
#include <type_traits>

#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

Status min_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(auto ins, variadic_inputs(ctx));
  return visit_numeric(ins[0]->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    return variadic_fold<T>(
        ctx, ins,
        [](T acc, T x) {
          if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(x)) return x;
          }
          return x < acc ? x : acc;
        },
        [](T acc, size_t) { return acc; });
  });
}

}  // namespace

void register_min(KernelRegistry& r) { r.add("Min", 1, min_kernel); }

}  // namespace onnxdbg::reference
