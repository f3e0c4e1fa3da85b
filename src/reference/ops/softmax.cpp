// Softmax: normalised exponentials, exp(x) / sum(exp(x)) (Softmax-1/11/13).
// Opset 1-12 flatten the input to 2-D at axis (default 1); 13 on use one axis (default -1).
#include "reference/ops/softmax_common.h"

namespace onnxdbg::reference {

void register_softmax(KernelRegistry& r) {
  r.add("Softmax", 1, softmax_family<SoftmaxKind::kSoftmax, true>).accumulates_in_double();
  r.add("Softmax", 13, softmax_family<SoftmaxKind::kSoftmax, false>).accumulates_in_double();
}

}  // namespace onnxdbg::reference
