// ReduceMean: arithmetic mean (integer means truncate) over the given axes (ReduceMean-1/11/13,
// axes attribute; 18, axes input 1).
// Accumulates in double for floats (halves via float32) and in 64-bit integers for integers.
#include "reference/ops/reduce_common.h"

namespace onnxdbg::reference {

void register_reduce_mean(KernelRegistry& r) {
  r.add("ReduceMean", 1, reduce_kernel<ReduceKind::kMean, AxesFrom::kAttribute>)
      .accumulates_in_double();
  r.add("ReduceMean", 18, reduce_kernel<ReduceKind::kMean, AxesFrom::kInput>)
      .accumulates_in_double();
}

}  // namespace onnxdbg::reference
