// ReduceL2: square root of the sum of squares over the given axes (ReduceL2-1/11/13, axes
// attribute; 18, axes input 1).
// Accumulates in double for floats (halves via float32) and in 64-bit integers for integers.
#include "reference/ops/reduce_common.h"

namespace onnxdbg::reference {

void register_reduce_l2(KernelRegistry& r) {
  r.add("ReduceL2", 1, reduce_kernel<ReduceKind::kL2, AxesFrom::kAttribute>)
      .accumulates_in_double();
  r.add("ReduceL2", 18, reduce_kernel<ReduceKind::kL2, AxesFrom::kInput>).accumulates_in_double();
}

}  // namespace onnxdbg::reference
