// Loop (ONNX Loop-1/11/13/16): runs `body` while the iteration count is below the optional trip
// count M and the condition holds. Body inputs: (iteration number, condition, N loop-carried
// values); outputs: (condition, N loop-carried values, K scan values). The node returns the final
// loop-carried values, then each scan value stacked over the iterations along a new axis 0.
// Loop-carried values may be sequences (Loop-13) or optionals (Loop-16); scan values are tensors.
#include "reference/ops/subgraph_util.h"
#include "reference/run_watch.h"

namespace onnxdbg::reference {
namespace {

Status loop(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const onnx::GraphProto* body, graph_attr(ctx, "body"));
  std::optional<int64_t> trip_count;
  if (const Tensor* m = ctx.input(0)) {
    ODB_ASSIGN_OR_RETURN(trip_count, scalar_int_of(ctx, *m, "M"));
  }
  bool cond = true;
  if (const Tensor* c = ctx.input(1)) {
    ODB_ASSIGN_OR_RETURN(cond, condition_value(ctx, *c, "cond"));
  }
  const size_t n_carried = ctx.num_inputs() < 2 ? 0 : ctx.num_inputs() - 2;
  if (ctx.num_outputs() < n_carried)
    return model_error(ctx.describe() + " has " + std::to_string(n_carried) +
                       " loop-carried inputs but only " + std::to_string(ctx.num_outputs()) +
                       " outputs");
  const size_t n_scan = ctx.num_outputs() - n_carried;
  if (static_cast<size_t>(body->output_size()) != 1 + n_carried + n_scan ||
      static_cast<size_t>(body->input_size()) != 2 + n_carried)
    return model_error(ctx.describe() + ": the body has " + std::to_string(body->input_size()) +
                       " inputs and " + std::to_string(body->output_size()) +
                       " outputs; expected " + std::to_string(2 + n_carried) + " and " +
                       std::to_string(1 + n_carried + n_scan));
  std::vector<Value> carried;
  for (size_t k = 0; k < n_carried; ++k) {
    const Value* v = ctx.input_value(2 + k);
    if (!v)
      return model_error(ctx.describe() + " is missing its loop-carried input " +
                         std::to_string(2 + k));
    carried.push_back(*v);
  }
  std::vector<std::vector<Tensor>> scans(n_scan);
  for (int64_t i = 0; (!trip_count || i < *trip_count) && cond; ++i) {
    // The watcher's progress line and --max-iterations (reference/run_watch.h).
    ODB_RETURN_IF_ERROR(note_iteration(ctx.node(), i, trip_count.value_or(-1), body->node_size()));
    std::vector<Value> in;
    in.emplace_back(Tensor::scalar<int64_t>(i));
    in.emplace_back(Tensor::scalar<bool>(cond));
    for (auto& c : carried) in.push_back(std::move(c));
    auto out = ctx.run_subgraph_values(*body, std::move(in));
    if (!out)
      return std::move(out).status().with_context("while running iteration " + std::to_string(i) +
                                                  " of the body of " + ctx.describe());
    if (!(*out)[0].is_tensor())
      return model_error(ctx.describe() + ": the body's condition output is " +
                         (*out)[0].kind_name() + ", not a tensor");
    ODB_ASSIGN_OR_RETURN(cond,
                         condition_value(ctx, (*out)[0].tensor(), "the body's condition output"));
    carried.clear();
    for (size_t k = 0; k < n_carried; ++k) carried.push_back(std::move((*out)[1 + k]));
    for (size_t k = 0; k < n_scan; ++k) {
      Value& sv = (*out)[1 + n_carried + k];
      if (!sv.is_tensor())
        return model_error(ctx.describe() + ": scan output " + std::to_string(k) +
                           " of the body is " + sv.kind_name() + "; scan outputs must be tensors");
      scans[k].push_back(std::move(sv.tensor()));
    }
  }
  end_iterations(ctx.node());
  for (size_t k = 0; k < n_carried; ++k) ctx.set_output_value(k, std::move(carried[k]));
  for (size_t k = 0; k < n_scan; ++k) {
    ODB_ASSIGN_OR_RETURN(
        Tensor t, stack_along(ctx, scans[k], 0, body->output(static_cast<int>(1 + n_carried + k))));
    ctx.set_output(n_carried + k, std::move(t));
  }
  return Status::ok();
}

}  // namespace

void register_loop(KernelRegistry& r) { r.add("Loop", 1, loop, HalfMode::kNative).through(25); }

}  // namespace onnxdbg::reference
