// ReduceProd: product over the given axes (ReduceProd-1/11/13, axes attribute; 18, axes input 1).
// Accumulates in double for floats (halves via float32) and in 64-bit integers for integers.
#include "reference/ops/reduce_common.h"

namespace onnxdbg::reference {

void register_reduce_prod(KernelRegistry& r) {
  r.add("ReduceProd", 1, reduce_kernel<ReduceKind::kProd, AxesFrom::kAttribute>)
      .accumulates_in_double();
  r.add("ReduceProd", 18, reduce_kernel<ReduceKind::kProd, AxesFrom::kInput>)
      .accumulates_in_double();
}

}  // namespace onnxdbg::reference
