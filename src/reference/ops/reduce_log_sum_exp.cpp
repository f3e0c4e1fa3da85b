// ReduceLogSumExp: log(sum(exp(x))), computed after subtracting the maximum, over the given axes
// (ReduceLogSumExp-1/11/13, axes attribute; 18, axes input 1).
// Accumulates in double for floats (halves via float32) and in 64-bit integers for integers.
#include "reference/ops/reduce_common.h"

namespace onnxdbg::reference {

void register_reduce_log_sum_exp(KernelRegistry& r) {
  r.add("ReduceLogSumExp", 1, reduce_kernel<ReduceKind::kLogSumExp, AxesFrom::kAttribute>)
      .accumulates_in_double();
  r.add("ReduceLogSumExp", 18, reduce_kernel<ReduceKind::kLogSumExp, AxesFrom::kInput>)
      .accumulates_in_double()
      .through(28);
}

}  // namespace onnxdbg::reference
