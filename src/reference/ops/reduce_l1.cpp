// ReduceL1: sum of absolute values over the given axes (ReduceL1-1/11/13, axes attribute; 18, axes
// input 1).
// Accumulates in double for floats (halves via float32) and in 64-bit integers for integers.
#include "reference/ops/reduce_common.h"

namespace onnxdbg::reference {

void register_reduce_l1(KernelRegistry& r) {
  r.add("ReduceL1", 1, reduce_kernel<ReduceKind::kL1, AxesFrom::kAttribute>)
      .accumulates_in_double();
  r.add("ReduceL1", 18, reduce_kernel<ReduceKind::kL1, AxesFrom::kInput>).accumulates_in_double();
}

}  // namespace onnxdbg::reference
