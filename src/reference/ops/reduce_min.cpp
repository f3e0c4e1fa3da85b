// ReduceMin: minimum (NaN propagates; +inf for an empty group) over the given axes
// (ReduceMin-1/11/12/13, axes attribute; 18, axes input 1).
// Accumulates in double for floats (halves via float32) and in 64-bit integers for integers.
#include "reference/ops/reduce_common.h"

namespace onnxdbg::reference {

void register_reduce_min(KernelRegistry& r) {
  r.add("ReduceMin", 1, reduce_kernel<ReduceKind::kMin, AxesFrom::kAttribute>);
  r.add("ReduceMin", 18, reduce_kernel<ReduceKind::kMin, AxesFrom::kInput>).through(20);
}

}  // namespace onnxdbg::reference
