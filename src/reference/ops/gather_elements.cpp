// GatherElements (ONNX GatherElements-11/13): out[i][j][k] = data[index][j][k] (for axis 0, and
// likewise for other axes) with index = indices[i][j][k]; output has the shape of indices.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status gather_elements(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* data, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* ind, ctx.required_input(1));
  const int64_t rank = data->rank();
  if (rank == 0) return model_error(ctx.describe() + " cannot gather from a scalar");
  ODB_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis_of(ctx, ctx.attr_int("axis", 0), rank));
  bool ok = ind->rank() == rank;
  for (int64_t d = 0; ok && d < rank; ++d) ok = d == axis || ind->dim(d) <= data->dim(d);
  if (!ok)
    return model_error(ctx.describe() + ": indices of shape " + shape_to_string(ind->shape()) +
                       " do not fit data of shape " + shape_to_string(data->shape()) +
                       " (same rank needed, and no larger outside axis " + std::to_string(axis) +
                       ")");
  ODB_ASSIGN_OR_RETURN(auto idx, ints_of_input(ctx, 1, "indices"));
  auto strides = strides_of(data->shape());
  const int64_t axis_stride = strides[static_cast<size_t>(axis)], dim = data->dim(axis);
  strides[static_cast<size_t>(axis)] = 0;
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, data->dtype(), ind->shape()));
  Status st;
  for_each_broadcast(ind->shape(), {strides}, [&](int64_t i, const int64_t* off) {
    int64_t v = idx[static_cast<size_t>(i)];
    if (v < -dim || v >= dim) {
      if (st.is_ok())
        st = model_error(ctx.describe() + ": index " + std::to_string(v) + " at flat position " +
                         std::to_string(i) + " of indices is out of range for axis " +
                         std::to_string(axis) + " of size " + std::to_string(dim));
      return;
    }
    if (v < 0) v += dim;
    copy_element(*data, off[0] + v * axis_stride, out, i);
  });
  ODB_RETURN_IF_ERROR(st);
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_gather_elements(KernelRegistry& r) {
  r.add("GatherElements", 11, gather_elements, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
