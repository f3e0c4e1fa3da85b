// DepthToSpace (ONNX DepthToSpace-1/11/13): moves blocks of channels of an NCHW tensor into
// blocksize x blocksize spatial blocks; mode DCR (default) or CRD (opset 11).
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status depth_to_space(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t b = ctx.attr_int("blocksize", 0);
  const std::string mode = ctx.attr_string("mode", "DCR");
  if (x->rank() != 4)
    return model_error(ctx.describe() + " needs a 4-D input, got shape " +
                       shape_to_string(x->shape()));
  if (b <= 0)
    return model_error(ctx.describe() + ": blocksize " + std::to_string(b) + " must be positive");
  if (mode != "DCR" && mode != "CRD")
    return model_error(ctx.describe() + ": unknown mode '" + mode + "'");
  const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3);
  if (c % (b * b) != 0)
    return model_error(ctx.describe() + ": channels " + std::to_string(c) +
                       " are not a multiple of blocksize^2 = " + std::to_string(b * b) +
                       " (input shape " + shape_to_string(x->shape()) + ")");
  const int64_t oc = c / (b * b);
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x->dtype(), {n, oc, h * b, w * b}));
  int64_t i = 0;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t co = 0; co < oc; ++co)
      for (int64_t y = 0; y < h * b; ++y)
        for (int64_t xx = 0; xx < w * b; ++xx) {
          const int64_t by = y % b, bx = xx % b;
          const int64_t ci = mode == "DCR" ? (by * b + bx) * oc + co : (co * b + by) * b + bx;
          copy_element(*x, ((in * c + ci) * h + y / b) * w + xx / b, out, i++);
        }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_depth_to_space(KernelRegistry& r) {
  r.add("DepthToSpace", 1, depth_to_space, HalfMode::kNative);
  // DepthToSpace-28 only added a function body.
  r.add("DepthToSpace", 11, depth_to_space, HalfMode::kNative).through(28);  // mode
}

}  // namespace onnxdbg::reference
