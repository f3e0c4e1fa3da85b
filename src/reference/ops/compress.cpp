// Compress (ONNX Compress-9/11): keeps the slices along `axis` (or the elements of the flattened
// input when no axis) whose entry in the 1-D bool `condition` is true. A condition shorter than
// the axis drops the remaining slices.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status compress(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* cond, ctx.required_input(1));
  if (cond->dtype() != DType::kBool || cond->rank() != 1)
    return model_error(ctx.describe() + ": condition must be a 1-D bool tensor, got " +
                       std::string(dtype_name(cond->dtype())) + " of shape " +
                       shape_to_string(cond->shape()));
  Shape shape = x->shape();
  int64_t axis = 0;
  if (ctx.has_attr("axis")) {
    ODB_ASSIGN_OR_RETURN(axis, normalize_axis_of(ctx, ctx.attr_int("axis", 0), x->rank()));
  } else {
    shape = {x->numel()};
  }
  const auto a = static_cast<size_t>(axis);
  const int64_t dim = shape[a];
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond->numel(); ++i) {
    if (!cond->data<bool>()[i]) continue;
    if (i >= dim)
      return model_error(ctx.describe() + ": condition is true at position " + std::to_string(i) +
                         " but the axis has size " + std::to_string(dim));
    keep.push_back(i);
  }
  Shape out_shape = shape;
  out_shape[a] = static_cast<int64_t>(keep.size());
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x->dtype(), out_shape));
  const int64_t outer = dims_product(shape, 0, a), inner = dims_product(shape, a + 1, shape.size());
  const auto n = static_cast<int64_t>(keep.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k)
      copy_elements(*x, (o * dim + keep[static_cast<size_t>(k)]) * inner, out, (o * n + k) * inner,
                    inner);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_compress(KernelRegistry& r) {
  r.add("Compress", 9, compress, HalfMode::kNative);
  r.add("Compress", 11, compress, HalfMode::kNative).through(28);  // negative axis
}

}  // namespace onnxdbg::reference
