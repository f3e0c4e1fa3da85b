// ReduceLogSum: log of the sum over the given axes (ReduceLogSum-1/11/13, axes attribute; 18, axes
// input 1).
// Accumulates in double for floats (halves via float32) and in 64-bit integers for integers.
#include "reference/ops/reduce_common.h"

namespace onnxdbg::reference {

void register_reduce_log_sum(KernelRegistry& r) {
  r.add("ReduceLogSum", 1, reduce_kernel<ReduceKind::kLogSum, AxesFrom::kAttribute>)
      .accumulates_in_double();
  r.add("ReduceLogSum", 18, reduce_kernel<ReduceKind::kLogSum, AxesFrom::kInput>)
      .accumulates_in_double()
      .through(28);
}

}  // namespace onnxdbg::reference
