// GatherND (ONNX GatherND-11/12/13): indices[..., k] address slices data[b..., i0, ..., ik-1, ...]
// after the first `batch_dims` (opset 12) dimensions shared by data and indices.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status gather_nd(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* data, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required_input(1));
  const int64_t r = data->rank(), q = ind->rank();
  const int64_t b = ctx.attr_int("batch_dims", 0);
  const std::string shapes = " (data shape " + shape_to_string(data->shape()) + ", indices shape " +
                             shape_to_string(ind->shape()) + ", batch_dims " + std::to_string(b) +
                             ")";
  if (r < 1 || q < 1 || b < 0 || b >= std::min(r, q))
    return model_error(ctx.describe() + ": invalid ranks or batch_dims" + shapes);
  const int64_t k = ind->dim(q - 1);
  if (k < 1 || k > r - b)
    return model_error(ctx.describe() + ": the last indices dimension must be in [1, " +
                       std::to_string(r - b) + "]" + shapes);
  for (int64_t d = 0; d < b; ++d)
    if (data->dim(d) != ind->dim(d))
      return model_error(ctx.describe() + ": batch dimension " + std::to_string(d) + " differs" +
                         shapes);
  ODB_ASSIGN_OR_RETURN(auto idx, ints_of_input(ctx, 1, "indices"));
  Shape out_shape(ind->shape().begin(), ind->shape().end() - 1);
  out_shape.insert(out_shape.end(), data->shape().begin() + b + k, data->shape().end());
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, data->dtype(), out_shape));
  const auto ds = strides_of(data->shape());
  const int64_t block =
      dims_product(data->shape(), static_cast<size_t>(b + k), data->shape().size());
  const int64_t batch_size =
      dims_product(data->shape(), static_cast<size_t>(b), data->shape().size());
  const int64_t per_batch =
      dims_product(ind->shape(), static_cast<size_t>(b), ind->shape().size() - 1);
  const int64_t batches = dims_product(data->shape(), 0, static_cast<size_t>(b));
  for (int64_t bi = 0; bi < batches; ++bi) {
    for (int64_t t = 0; t < per_batch; ++t) {
      const int64_t tuple = bi * per_batch + t;
      int64_t off = bi * batch_size;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dim = data->dim(b + j);
        int64_t v = idx[static_cast<size_t>(tuple * k + j)];
        if (v < -dim || v >= dim)
          return model_error(ctx.describe() + ": index " + std::to_string(v) + " (tuple " +
                             std::to_string(tuple) + ", component " + std::to_string(j) +
                             ") is out of range for data dimension " + std::to_string(b + j) +
                             " of size " + std::to_string(dim));
        if (v < 0) v += dim;
        off += v * ds[static_cast<size_t>(b + j)];
      }
      copy_elements(*data, off, out, tuple * block, block);
    }
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_gather_nd(KernelRegistry& r) {
  r.add("GatherND", 11, gather_nd, HalfMode::kNative);
  r.add("GatherND", 12, gather_nd, HalfMode::kNative);  // batch_dims
}

}  // namespace onnxdbg::reference
