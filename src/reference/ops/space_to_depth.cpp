// SpaceToDepth (ONNX SpaceToDepth-1/13): moves blocksize x blocksize spatial blocks of an NCHW
// tensor into channels (the inverse of DepthToSpace in DCR mode).
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status space_to_depth(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t b = ctx.attr_int("blocksize", 0);
  if (x->rank() != 4)
    return model_error(ctx.describe() + " needs a 4-D input, got shape " +
                       shape_to_string(x->shape()));
  if (b <= 0)
    return model_error(ctx.describe() + ": blocksize " + std::to_string(b) + " must be positive");
  const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3);
  if (h % b != 0 || w % b != 0)
    return model_error(ctx.describe() + ": height and width of shape " +
                       shape_to_string(x->shape()) + " are not multiples of blocksize " +
                       std::to_string(b));
  const int64_t oh = h / b, ow = w / b;
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x->dtype(), {n, c * b * b, oh, ow}));
  int64_t i = 0;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t co = 0; co < c * b * b; ++co)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          const int64_t ci = co % c, blk = co / c, by = blk / b, bx = blk % b;
          copy_element(*x, ((in * c + ci) * h + y * b + by) * w + xx * b + bx, out, i++);
        }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_space_to_depth(KernelRegistry& r) {
  r.add("SpaceToDepth", 1, space_to_depth, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
