// If (ONNX If-1/11/13/16): runs then_branch or else_branch (which see the outer scope) depending
// on the single-element bool `cond`, and returns that branch's outputs: tensors, or from If-13
// sequences and from If-16 optionals.
#include "reference/ops/subgraph_util.h"

namespace onnxdbg::reference {
namespace {

Status if_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* cond_t, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const bool cond, condition_value(ctx, *cond_t, "cond"));
  const std::string name = cond ? "then_branch" : "else_branch";
  ODB_ASSIGN_OR_RETURN(const onnx::GraphProto* g, graph_attr(ctx, name));
  auto outs = ctx.run_subgraph_values(*g, {});
  if (!outs)
    return std::move(outs).status().with_context("while running " + name + " of " + ctx.describe());
  if (outs->size() != ctx.num_outputs())
    return model_error(ctx.describe() + ": " + name + " returns " + std::to_string(outs->size()) +
                       " values but the node has " + std::to_string(ctx.num_outputs()) +
                       " outputs");
  for (size_t i = 0; i < outs->size(); ++i) ctx.set_output_value(i, std::move((*outs)[i]));
  return Status::ok();
}

}  // namespace

void register_if(KernelRegistry& r) { r.add("If", 1, if_kernel, HalfMode::kNative).through(25); }

}  // namespace onnxdbg::reference
