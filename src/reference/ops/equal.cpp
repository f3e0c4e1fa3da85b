// Equal: elementwise bool A == B (Equal-1/7/11/13; 19 adds strings); float16/bfloat16 compare
// exactly as float32. Opset 1-6 use legacy broadcasting (attributes broadcast/axis), 7 on numpy
// broadcasting.
#include "reference/ops/binary_common.h"

namespace onnxdbg::reference {
namespace {

template <Broadcast kMode>
Status equal_kernel(KernelContext& ctx) {
  return binary_elementwise(ctx, kMode, VisitNumericOrBool{},
                            [](auto x, auto y) { return x == y; });
}

// Equal-19: strings compare byte for byte.
Status equal_v19_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* a, ctx.required_input(0));
  if (a->dtype() != DType::kString) return equal_kernel<Broadcast::kNumpy>(ctx);
  ODB_ASSIGN_OR_RETURN(const Tensor* b, ctx.required_input(1));
  if (b->dtype() != DType::kString)
    return model_error(ctx.describe() + " has inputs of different element types: string and " +
                       std::string(dtype_name(b->dtype())));
  ODB_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes({a->shape(), b->shape()}));
  ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make_uninitialized(DType::kBool, shape));
  bool* po = out.data<bool>();
  const auto& sa = a->strings();
  const auto& sb = b->strings();
  for_each_broadcast(shape,
                     {broadcast_strides(a->shape(), shape), broadcast_strides(b->shape(), shape)},
                     [&](int64_t i, const int64_t* o) {
                       po[i] = sa[static_cast<size_t>(o[0])] == sb[static_cast<size_t>(o[1])];
                     });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_equal(KernelRegistry& r) {
  r.add("Equal", 1, equal_kernel<Broadcast::kLegacy>);
  r.add("Equal", 7, equal_kernel<Broadcast::kNumpy>);
  r.add("Equal", 19, equal_v19_kernel);
}

}  // namespace onnxdbg::reference
