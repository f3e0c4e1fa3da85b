// NegativeLogLikelihoodLoss (ONNX NegativeLogLikelihoodLoss-12/13): loss = -input[n, target, d...]
// weighted per class, with ignore_index and reduction none/sum/mean (see loss_common.h). A kernel
// rather than the function body, for speed and readable errors.
#include "reference/ops/loss_common.h"

namespace onnxdbg::reference {
namespace {

Status negative_log_likelihood_loss(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* target, ctx.required_input(1));
  if (!is_floating(x->dtype()))
    return unsupported(ctx.describe() + ": input must be a float tensor, got " +
                       std::string(dtype_name(x->dtype())));
  ODB_ASSIGN_OR_RETURN(Tensor loss, nll_loss(ctx, *x, *target, ctx.input(2)));
  ctx.set_output(0, std::move(loss));
  return Status::ok();
}

}  // namespace

void register_negative_log_likelihood_loss(KernelRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", 12, negative_log_likelihood_loss);
  r.add("NegativeLogLikelihoodLoss", 13, negative_log_likelihood_loss).through(22);
}

}  // namespace onnxdbg::reference
