// ReduceSum: sum over the given axes (ReduceSum-1/11/13; axes become input 1 at 13).
// Accumulates in double for floats (halves via float32) and in 64-bit integers for integers.
#include "reference/ops/reduce_common.h"

namespace onnxdbg::reference {

void register_reduce_sum(KernelRegistry& r) {
  r.add("ReduceSum", 1, reduce_kernel<ReduceKind::kSum, AxesFrom::kAttribute>)
      .accumulates_in_double();
  r.add("ReduceSum", 13, reduce_kernel<ReduceKind::kSum, AxesFrom::kInput>).accumulates_in_double();
}

}  // namespace onnxdbg::reference
