// ReduceSumSquare: sum of squares over the given axes (ReduceSumSquare-1/11/13, axes attribute; 18,
// axes input 1).
// Accumulates in double for floats (halves via float32) and in 64-bit integers for integers.
#include "reference/ops/reduce_common.h"

namespace onnxdbg::reference {

void register_reduce_sum_square(KernelRegistry& r) {
  r.add("ReduceSumSquare", 1, reduce_kernel<ReduceKind::kSumSquare, AxesFrom::kAttribute>)
      .accumulates_in_double();
  r.add("ReduceSumSquare", 18, reduce_kernel<ReduceKind::kSumSquare, AxesFrom::kInput>)
      .accumulates_in_double();
}

}  // namespace onnxdbg::reference
