// ReverseSequence (ONNX ReverseSequence-10): for each batch entry b, reverses the first
// sequence_lens[b] steps along time_axis of a [batch, time, ...] or [time, batch, ...] tensor and
// copies the rest unchanged.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status reverse_sequence(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(auto lens, ints_of_input(ctx, 1, "sequence_lens"));
  const int64_t batch_axis = ctx.attr_int("batch_axis", 1),
                time_axis = ctx.attr_int("time_axis", 0);
  if (x->rank() < 2)
    return model_error(ctx.describe() + ": input must have rank >= 2, got shape " +
                       shape_to_string(x->shape()));
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    return model_error(ctx.describe() +
                       ": batch_axis and time_axis must be 0 and 1 in some order, got " +
                       std::to_string(batch_axis) + " and " + std::to_string(time_axis));
  const int64_t nb = x->dim(batch_axis), nt = x->dim(time_axis);
  if (static_cast<int64_t>(lens.size()) != nb)
    return model_error(ctx.describe() + ": sequence_lens has " + std::to_string(lens.size()) +
                       " values for a batch of " + std::to_string(nb));
  for (int64_t l : lens)
    if (l < 0 || l > nt)
      return model_error(ctx.describe() + ": sequence length " + std::to_string(l) +
                         " is outside [0, " + std::to_string(nt) + "]");
  Tensor out = *x;
  const int64_t inner = dims_product(x->shape(), 2, x->shape().size());
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t t = 0; t < lens[static_cast<size_t>(b)]; ++t) {
      const int64_t src_t = lens[static_cast<size_t>(b)] - 1 - t;
      auto flat = [&](int64_t tt) { return (batch_axis == 0 ? b * nt + tt : tt * nb + b) * inner; };
      copy_elements(*x, flat(src_t), out, flat(t), inner);
    }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_reverse_sequence(KernelRegistry& r) {
  r.add("ReverseSequence", 10, reverse_sequence, HalfMode::kNative).through(28);
}

}  // namespace onnxdbg::reference
