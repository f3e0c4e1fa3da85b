// Transpose (ONNX Transpose-1/13): permutes the axes; output dim i is input dim perm[i]
// (default: reversed axes).
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status transpose(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const size_t rank = x->shape().size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  if (ctx.has_attr("perm")) perm = ctx.attr_ints("perm");
  std::vector<bool> seen(rank, false);
  bool ok = perm.size() == rank;
  for (size_t i = 0; ok && i < rank; ++i) {
    ok =
        perm[i] >= 0 && perm[i] < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(perm[i])];
    if (ok) seen[static_cast<size_t>(perm[i])] = true;
  }
  if (!ok)
    return model_error(ctx.describe() + ": perm " + list_to_string(perm) +
                       " is not a permutation of the axes of an input of shape " +
                       shape_to_string(x->shape()));
  const auto in_strides = strides_of(x->shape());
  Shape out_shape(rank);
  std::vector<int64_t> strides(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = x->shape()[static_cast<size_t>(perm[i])];
    strides[i] = in_strides[static_cast<size_t>(perm[i])];
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x->dtype(), out_shape));
  const size_t es = x->dtype() == DType::kString ? 0 : dtype_size(x->dtype());
  auto copy_runs = [&](auto tag) {
    using U = decltype(tag);  // an unsigned integer of the element's size: bits are copied
    const U* src = reinterpret_cast<const U*>(x->raw());
    U* dst = reinterpret_cast<U*>(out.raw());
    for_each_broadcast_run(out_shape, {strides},
                           [&](int64_t i, const int64_t* off, int64_t len, const int64_t* st) {
                             const U* s = src + off[0];
                             for (int64_t j = 0; j < len; ++j) dst[i + j] = s[j * st[0]];
                           });
  };
  switch (es) {
    case 1:
      copy_runs(uint8_t{});
      break;
    case 2:
      copy_runs(uint16_t{});
      break;
    case 4:
      copy_runs(uint32_t{});
      break;
    case 8:
      copy_runs(uint64_t{});
      break;
    default:
      for_each_broadcast(out_shape, {strides},
                         [&](int64_t i, const int64_t* off) { copy_element(*x, off[0], out, i); });
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_transpose(KernelRegistry& r) {
  r.add("Transpose", 1, transpose, HalfMode::kNative).through(25);
}

}  // namespace onnxdbg::reference
