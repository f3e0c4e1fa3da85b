// ScatterND (ONNX ScatterND-11/13/16/18): output = copy of data; for each index tuple
// indices[..., :], the slice data[tuple] is replaced by (or reduced with) the matching updates.
#include "reference/ops/scatter_util.h"

namespace onnxdbg::reference {
namespace {

Status scatter_nd(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* data, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const Tensor* upd, ctx.required_input(2));
  ODB_ASSIGN_OR_RETURN(const Reduction red, scatter_reduction(ctx));
  const int64_t r = data->rank(), q = ind->rank();
  const std::string shapes = " (data shape " + shape_to_string(data->shape()) + ", indices shape " +
                             shape_to_string(ind->shape()) + ", updates shape " +
                             shape_to_string(upd->shape()) + ")";
  if (r < 1 || q < 1)
    return model_error(ctx.describe() + ": data and indices need rank >= 1" + shapes);
  const int64_t k = ind->dim(q - 1);
  if (k > r)
    return model_error(ctx.describe() + ": the last indices dimension exceeds data's rank" +
                       shapes);
  Shape want(ind->shape().begin(), ind->shape().end() - 1);
  want.insert(want.end(), data->shape().begin() + k, data->shape().end());
  if (upd->shape() != want || upd->dtype() != data->dtype())
    return model_error(ctx.describe() + ": updates must have shape " + shape_to_string(want) +
                       " and data's dtype" + shapes);
  ODB_ASSIGN_OR_RETURN(auto idx, ints_of_input(ctx, 1, "indices"));
  const auto ds = strides_of(data->shape());
  const int64_t block = dims_product(data->shape(), static_cast<size_t>(k), data->shape().size());
  const int64_t tuples = dims_product(ind->shape(), 0, ind->shape().size() - 1);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  pairs.reserve(static_cast<size_t>(tuples * block));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t dim = data->dim(j);
      int64_t v = idx[static_cast<size_t>(t * k + j)];
      if (v < -dim || v >= dim)
        return model_error(ctx.describe() + ": index " + std::to_string(v) + " (tuple " +
                           std::to_string(t) + ", component " + std::to_string(j) +
                           ") is out of range for data dimension " + std::to_string(j) +
                           " of size " + std::to_string(dim));
      if (v < 0) v += dim;
      off += v * ds[static_cast<size_t>(j)];
    }
    for (int64_t e = 0; e < block; ++e) pairs.emplace_back(off + e, t * block + e);
  }
  Tensor out = *data;
  ODB_RETURN_IF_ERROR(apply_scatter(ctx, out, *upd, pairs, red));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_scatter_nd(KernelRegistry& r) {
  r.add("ScatterND", 11, scatter_nd, HalfMode::kNative);
  r.add("ScatterND", 16, scatter_nd, HalfMode::kNative);  // reduction add/mul
  r.add("ScatterND", 18, scatter_nd, HalfMode::kNative);  // reduction max/min
}

}  // namespace onnxdbg::reference
