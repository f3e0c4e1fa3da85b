// Col2Im: rearranges column blocks back into an image, the inverse of im2col (Col2Im-18). Input
// [N, C * prod(block_shape), L] with L the number of block positions; output [N, C, image_shape...]
// where overlapping blocks add up. Attributes strides, dilations and pads as Conv's.
#include "core/run_limits.h"
#include "reference/kernel_util.h"
#include "reference/ops/conv_common.h"

namespace onnxdbg::reference {
namespace {

Status col2im_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* image_t, ctx.required_input(1));
  ODB_ASSIGN_OR_RETURN(const Tensor* block_t, ctx.required_input(2));
  auto image = to_int64_vector(*image_t);
  if (!image)
    return std::move(image).status().with_context("reading image_shape of " + ctx.describe());
  auto block = to_int64_vector(*block_t);
  if (!block)
    return std::move(block).status().with_context("reading block_shape of " + ctx.describe());
  if (image->empty() || image->size() != block->size())
    return model_error(ctx.describe() + ": image_shape " + ints_to_string(*image) +
                       " and block_shape " + ints_to_string(*block) +
                       " must have the same number (at least 1) of spatial dims");
  for (int64_t v : *image)
    if (v < 1)
      return model_error(ctx.describe() + ": image_shape " + ints_to_string(*image) +
                         " must be positive");
  if (x->rank() != 3)
    return model_error(ctx.describe() +
                       ": input must be [N, C * prod(block_shape), L], got shape " +
                       shape_to_string(x->shape()));
  ODB_ASSIGN_OR_RETURN(SpatialGeometry g, forward_geometry(ctx, *image, *block, false));
  const int64_t k_size = product(g.kernel);
  if (x->dim(1) % k_size != 0)
    return model_error(ctx.describe() + ": input dim 1 (" + std::to_string(x->dim(1)) +
                       ") is not a multiple of prod(block_shape " + ints_to_string(*block) + ")");
  if (x->dim(2) != product(g.out))
    return model_error(ctx.describe() + ": input has " + std::to_string(x->dim(2)) +
                       " blocks (dim 2) but image_shape " + ints_to_string(*image) + " holds " +
                       std::to_string(product(g.out)) + " block positions " +
                       ints_to_string(g.out));
  const int64_t n = x->dim(0), c = x->dim(1) / k_size;
  Shape out_shape{n, c};
  out_shape.insert(out_shape.end(), image->begin(), image->end());
  return visit_float(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make(x->dtype(), out_shape));
    const int64_t in_per_batch = x->dim(1) * x->dim(2), out_per_batch = c * product(g.in);
    for (int64_t b = 0; b < n; ++b) {
      if (run_should_stop()) break;
      col2im(x->data<T>() + b * in_per_batch, c, g, out.data<T>() + b * out_per_batch);
    }
    ctx.set_output(0, std::move(out));
    return Status::ok();
  });
}

}  // namespace

void register_col2im(KernelRegistry& r) {
  r.add("Col2Im", 18, col2im_kernel).accumulates_in_double();
}

}  // namespace onnxdbg::reference
