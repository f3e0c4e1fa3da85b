// ArrayFeatureExtractor (ai.onnx.ml ArrayFeatureExtractor-1): Z = X[..., Y] — the elements of
// X's last axis at the indices Y (any shape, read flat), giving shape X.shape[:-1] + [len(Y)]; a
// 1-D X gives [1, len(Y)] (as ONNX's reference and ONNX Runtime do). Indices must be in range.
#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status array_feature_extractor(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(std::vector<int64_t> idx, ints_of_input(ctx, 1, "Y"));
  if (x->rank() == 0)
    return model_error(ctx.describe() + " takes an input X of rank 1 or more, got a scalar");
  const int64_t last = x->dim(x->rank() - 1);
  for (int64_t i : idx)
    if (i < 0 || i >= last)
      return model_error(ctx.describe() + ": index " + std::to_string(i) +
                         " is out of range for a last axis of size " + std::to_string(last));
  Shape shape = x->shape();
  shape.back() = static_cast<int64_t>(idx.size());
  if (x->rank() == 1) shape.insert(shape.begin(), 1);
  ODB_ASSIGN_OR_RETURN(Tensor z, Tensor::make(x->dtype(), shape));
  const int64_t rows =
      last ? x->numel() / last : dims_product(x->shape(), 0, x->shape().size() - 1);
  const int64_t k = static_cast<int64_t>(idx.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j)
      copy_elements(*x, r * last + idx[static_cast<size_t>(j)], z, r * k + j, 1);
  ctx.set_output(0, std::move(z));
  return Status::ok();
}

}  // namespace

void register_array_feature_extractor(KernelRegistry& r) {
  r.add("ArrayFeatureExtractor", 1, array_feature_extractor, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
