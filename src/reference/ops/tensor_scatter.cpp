// TensorScatter (TensorScatter-24): a KV-cache update. present_cache = past_cache with `update`
// written along `axis` (default -2, the sequence axis; not the batch axis 0) from position
// write_indices[b] (0 when omitted) for each batch sample b. Mode "linear" (default) requires the
// written range to fit in max_sequence_length; "circular" wraps positions modulo it.
#include "reference/kernel_util.h"
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status tensor_scatter_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* past, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* update, ctx.required_input(1));
  const Tensor* write_t = ctx.input(2);
  const std::string mode = ctx.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return model_error(ctx.describe() + ": unknown mode '" + mode + "'");
  if (past->rank() < 2)
    return model_error(ctx.describe() + ": past_cache must have rank >= 2, got shape " +
                       shape_to_string(past->shape()));
  ODB_ASSIGN_OR_RETURN(const int64_t axis,
                       normalize_axis_of(ctx, ctx.attr_int("axis", -2), past->rank()));
  if (axis == 0) return model_error(ctx.describe() + ": axis must not be the batch axis 0");
  if (update->dtype() != past->dtype())
    return model_error(ctx.describe() + ": update is " + std::string(dtype_name(update->dtype())) +
                       " but past_cache is " + std::string(dtype_name(past->dtype())));
  bool shapes_ok = update->rank() == past->rank() && update->dim(axis) <= past->dim(axis);
  for (int64_t d = 0; shapes_ok && d < past->rank(); ++d)
    shapes_ok = d == axis || update->dim(d) == past->dim(d);
  if (!shapes_ok)
    return model_error(ctx.describe() + ": update of shape " + shape_to_string(update->shape()) +
                       " must have past_cache's shape " + shape_to_string(past->shape()) +
                       " but for a sequence length (axis " + std::to_string(axis) +
                       ") no longer than past_cache's");
  const int64_t batch = past->dim(0), max_seq = past->dim(axis), seq = update->dim(axis);
  std::vector<int64_t> write(static_cast<size_t>(batch), 0);
  if (write_t) {
    auto w = to_int64_vector(*write_t);
    if (!w) return std::move(w).status().with_context("reading write_indices of " + ctx.describe());
    if (write_t->rank() != 1 || static_cast<int64_t>(w->size()) != batch)
      return model_error(ctx.describe() + ": write_indices must have shape [" +
                         std::to_string(batch) + "], got " + shape_to_string(write_t->shape()));
    write = std::move(*w);
  }
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t w = write[static_cast<size_t>(b)];
    if (w < 0 || (mode == "linear" && w > max_seq - seq))
      return model_error(ctx.describe() + ": write index " + std::to_string(w) +
                         " of batch sample " + std::to_string(b) + " does not fit " +
                         std::to_string(seq) + " positions into max_sequence_length " +
                         std::to_string(max_seq) + " (mode " + mode + ")");
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, past->dtype(), past->shape()));
  for (int64_t i = 0; i < past->numel(); ++i) copy_element(*past, i, out, i);
  const int64_t prefix = dims_product(past->shape(), 1, static_cast<size_t>(axis));
  const int64_t inner =
      dims_product(past->shape(), static_cast<size_t>(axis) + 1, past->shape().size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t pre = 0; pre < prefix; ++pre)
      for (int64_t s = 0; s < seq; ++s) {
        // seq > 0 here, so max_seq > 0; w + s cannot overflow in linear mode (checked above) and
        // is taken modulo max_seq first in circular mode.
        const int64_t pos = (write[static_cast<size_t>(b)] % max_seq + s) % max_seq;
        const int64_t dst = ((b * prefix + pre) * max_seq + pos) * inner;
        const int64_t src = ((b * prefix + pre) * seq + s) * inner;
        for (int64_t k = 0; k < inner; ++k) copy_element(*update, src + k, out, dst + k);
      }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_tensor_scatter(KernelRegistry& r) {
  r.add("TensorScatter", 24, tensor_scatter_kernel, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
