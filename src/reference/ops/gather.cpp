// Gather (ONNX Gather-1/11/13): picks entries of `data` along `axis` at `indices` (int32/int64,
// negative counts from the end); output shape data[:axis] + indices.shape + data[axis+1:].
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status gather(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* data, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required_input(1));
  if (data->rank() == 0) return model_error(ctx.describe() + " cannot gather from a scalar");
  ODB_ASSIGN_OR_RETURN(const int64_t axis,
                       normalize_axis_of(ctx, ctx.attr_int("axis", 0), data->rank()));
  ODB_ASSIGN_OR_RETURN(auto idx, ints_of_input(ctx, 1, "indices"));
  const auto a = static_cast<size_t>(axis);
  const int64_t dim = data->dim(axis);
  for (size_t k = 0; k < idx.size(); ++k) {
    if (idx[k] < -dim || idx[k] >= dim)
      return model_error(ctx.describe() + ": index " + std::to_string(idx[k]) + " (position " +
                         std::to_string(k) + " of indices) is out of range for axis " +
                         std::to_string(axis) + " of size " + std::to_string(dim) +
                         " (data shape " + shape_to_string(data->shape()) + ")");
    if (idx[k] < 0) idx[k] += dim;
  }
  Shape out_shape(data->shape().begin(), data->shape().begin() + static_cast<int64_t>(a));
  out_shape.insert(out_shape.end(), ind->shape().begin(), ind->shape().end());
  out_shape.insert(out_shape.end(), data->shape().begin() + static_cast<int64_t>(a) + 1,
                   data->shape().end());
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, data->dtype(), out_shape));
  const int64_t outer = dims_product(data->shape(), 0, a);
  const int64_t inner = dims_product(data->shape(), a + 1, data->shape().size());
  const auto n = static_cast<int64_t>(idx.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k)
      copy_elements(*data, (o * dim + idx[static_cast<size_t>(k)]) * inner, out,
                    (o * n + k) * inner, inner);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_gather(KernelRegistry& r) {
  r.add("Gather", 1, gather, HalfMode::kNative);
  r.add("Gather", 11, gather, HalfMode::kNative);  // negative indices and axis
}

}  // namespace onnxdbg::reference
