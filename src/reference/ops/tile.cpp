// Tile (ONNX Tile-1/6/13): repeats the input repeats[i] times along each axis i. Opset 1 takes a
// scalar `tiles` and `axis` as inputs instead of a repeats vector.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status tile(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  std::vector<int64_t> repeats;
  if (ctx.opset() < 6) {
    ODB_ASSIGN_OR_RETURN(const Tensor* tiles_t, ctx.required_input(1));
    ODB_ASSIGN_OR_RETURN(const Tensor* axis_t, ctx.required_input(2));
    ODB_ASSIGN_OR_RETURN(const int64_t tiles, scalar_int_of(ctx, *tiles_t, "tiles"));
    ODB_ASSIGN_OR_RETURN(const int64_t axis_v, scalar_int_of(ctx, *axis_t, "axis"));
    ODB_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis_of(ctx, axis_v, x->rank()));
    repeats.assign(x->shape().size(), 1);
    repeats[static_cast<size_t>(axis)] = tiles;
  } else {
    ODB_ASSIGN_OR_RETURN(repeats, ints_of_input(ctx, 1, "repeats"));
  }
  if (static_cast<int64_t>(repeats.size()) != x->rank())
    return model_error(ctx.describe() + ": repeats " + list_to_string(repeats) +
                       " must have one entry per dimension of the input of shape " +
                       shape_to_string(x->shape()));
  Shape out_shape = x->shape();
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i] < 0)
      return model_error(ctx.describe() + ": repeats " + list_to_string(repeats) +
                         " has a negative entry");
    if (__builtin_mul_overflow(out_shape[i], repeats[i], &out_shape[i]))
      return model_error(ctx.describe() + ": repeats " + list_to_string(repeats) + " make dim " +
                         std::to_string(i) + " of the input of shape " +
                         shape_to_string(x->shape()) + " larger than any tensor");
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x->dtype(), out_shape));
  const auto in_strides = strides_of(x->shape());
  int64_t i = 0;
  for_each_index(out_shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (idx[d] % x->shape()[d]) * in_strides[d];
    copy_element(*x, off, out, i++);
  });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_tile(KernelRegistry& r) {
  r.add("Tile", 1, tile, HalfMode::kNative);  // tiles and axis inputs
  r.add("Tile", 6, tile, HalfMode::kNative);  // repeats input
}

}  // namespace onnxdbg::reference
