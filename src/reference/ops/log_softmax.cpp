// LogSoftmax: log of Softmax, x - max - log(sum(exp(x - max))) (LogSoftmax-1/11/13).
// Opset 1-12 flatten the input to 2-D at axis (default 1); 13 on use one axis (default -1).
#include "reference/ops/softmax_common.h"

namespace onnxdbg::reference {

void register_log_softmax(KernelRegistry& r) {
  r.add("LogSoftmax", 1, softmax_family<SoftmaxKind::kLogSoftmax, true>).accumulates_in_double();
  r.add("LogSoftmax", 13, softmax_family<SoftmaxKind::kLogSoftmax, false>).accumulates_in_double();
}

}  // namespace onnxdbg::reference
