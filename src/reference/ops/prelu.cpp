// PRelu: x for x >= 0, slope * x otherwise (PRelu-1/6/7/9/16). From opset 7 slope broadcasts onto
// X with numpy rules (unidirectionally: the output has X's shape); before, slope is either one
// value or one per channel (dim 1 of X).
#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

template <bool kLegacy>
Status prelu_kernel(KernelContext& ctx) {
  const Tensor* x = nullptr;
  const Tensor* slope = nullptr;
  Tensor storage;
  ODB_RETURN_IF_ERROR(binary_inputs(ctx, Broadcast::kNumpy, x, slope, storage));
  if constexpr (kLegacy) {
    if (slope->numel() != 1 && slope->shape() != x->shape()) {
      if (x->rank() < 2 || slope->numel() != x->dim(1))
        return model_error(ctx.describe() + ": slope of shape " + shape_to_string(slope->shape()) +
                           " is neither one value nor one per channel of X " +
                           shape_to_string(x->shape()));
      Shape s(static_cast<size_t>(x->rank() - 1), 1);
      s[0] = x->dim(1);
      ODB_ASSIGN_OR_RETURN(storage, slope->reshaped(s));
      slope = &storage;
    }
  }
  ODB_ASSIGN_OR_RETURN(Shape out_shape, broadcast_shapes({x->shape(), slope->shape()}));
  if (out_shape != x->shape())
    return model_error(ctx.describe() + ": slope of shape " + shape_to_string(slope->shape()) +
                       " does not broadcast to X's shape " + shape_to_string(x->shape()));
  return visit_numeric(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    ODB_ASSIGN_OR_RETURN(Tensor out, (broadcast_binary<T, T, T>(*x, *slope, [](T v, T s) {
                           return v < T{0} ? wrapping_mul(s, v) : v;
                         })));
    ctx.set_output(0, std::move(out));
    return Status::ok();
  });
}

}  // namespace

void register_prelu(KernelRegistry& r) {
  r.add("PRelu", 1, prelu_kernel<true>);
  r.add("PRelu", 7, prelu_kernel<false>);
}

}  // namespace onnxdbg::reference
