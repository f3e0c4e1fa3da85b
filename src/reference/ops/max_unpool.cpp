// MaxUnpool (ONNX MaxUnpool-9/11): scatters X into a zero tensor at the flat indices I that
// MaxPool produced, flat over the whole unpooled tensor of shape N x C x ((in - 1) * stride +
// kernel - pad_begin - pad_end). When output_shape is given the result is that unpooled tensor
// zero-padded at the end of each dim to output_shape (ONNX's reference and test data read the
// indices in the unpooled shape, not in output_shape).
#include "reference/ops/conv_common.h"
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status max_unpool(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required_input(1));
  if (x->rank() < 3)
    return model_error(ctx.describe() + ": X must be N x C x D1 x ..., got shape " +
                       shape_to_string(x->shape()));
  if (ind->shape() != x->shape())
    return model_error(ctx.describe() + ": I has shape " + shape_to_string(ind->shape()) +
                       " but X has shape " + shape_to_string(x->shape()));
  const size_t nd = static_cast<size_t>(x->rank() - 2);
  SpatialGeometry g;
  g.kernel = ctx.attr_ints("kernel_shape");
  if (g.kernel.size() != nd)
    return model_error(ctx.describe() + ": kernel_shape " + ints_to_string(g.kernel) + " has " +
                       std::to_string(g.kernel.size()) + " values for " + std::to_string(nd) +
                       " spatial dims");
  ODB_RETURN_IF_ERROR(read_strides_dilations(ctx, g));
  ODB_RETURN_IF_ERROR(read_pads(ctx, g));
  Shape out_shape{x->dim(0), x->dim(1)};
  for (size_t d = 0; d < nd; ++d)
    out_shape.push_back((x->dim(static_cast<int64_t>(d + 2)) - 1) * g.strides[d] + g.kernel[d] -
                        g.pads_begin[d] - g.pads_end[d]);
  const Shape unpooled = out_shape;
  if (ctx.input(2)) {
    ODB_ASSIGN_OR_RETURN(auto given, ints_of_input(ctx, 2, "output_shape"));
    if (given.size() != out_shape.size())
      return model_error(ctx.describe() + ": output_shape " + list_to_string(given) +
                         " must have rank " + std::to_string(out_shape.size()));
    out_shape = given;
  }
  ODB_ASSIGN_OR_RETURN(auto idx, ints_of_input(ctx, 1, "I"));
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, x->dtype(), out_shape));
  const int64_t unpooled_numel = product(unpooled);
  for (int64_t i = 0; i < x->numel(); ++i) {
    const int64_t j = idx[static_cast<size_t>(i)];
    if (j < 0 || j >= unpooled_numel)
      return model_error(ctx.describe() + ": index " + std::to_string(j) +
                         " is outside the unpooled tensor of shape " + shape_to_string(unpooled));
    // Coordinates of j in the unpooled shape, re-flattened in the output shape.
    int64_t rem = j, stride = 1, dst = 0;
    for (size_t d = unpooled.size(); d-- > 0;) {
      const int64_t c = rem % unpooled[d];
      rem /= unpooled[d];
      if (c >= out_shape[d])
        return model_error(ctx.describe() + ": index " + std::to_string(j) +
                           " falls outside output_shape " + list_to_string(out_shape));
      dst += c * stride;
      stride *= out_shape[d];
    }
    copy_element(*x, i, y, dst);
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_max_unpool(KernelRegistry& r) {
  r.add("MaxUnpool", 9, max_unpool, HalfMode::kNative);
  r.add("MaxUnpool", 11, max_unpool, HalfMode::kNative).through(22);
}

}  // namespace onnxdbg::reference
