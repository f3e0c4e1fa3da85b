// StringConcat: elementwise X + Y of two string tensors with numpy broadcasting (StringConcat-20).
// Strings are concatenated byte for byte (UTF-8 stays valid UTF-8).
#include "reference/kernel_util.h"

namespace onnxdbg::reference {
namespace {

Status string_concat_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* a, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* b, ctx.required_input(1));
  if (a->dtype() != DType::kString || b->dtype() != DType::kString)
    return model_error(ctx.describe() + " takes two string tensors, got " +
                       std::string(dtype_name(a->dtype())) + " and " +
                       std::string(dtype_name(b->dtype())));
  ODB_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes({a->shape(), b->shape()}));
  ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make(DType::kString, shape));
  auto& so = out.strings();
  const auto& sa = a->strings();
  const auto& sb = b->strings();
  for_each_broadcast(
      shape, {broadcast_strides(a->shape(), shape), broadcast_strides(b->shape(), shape)},
      [&](int64_t i, const int64_t* o) {
        so[static_cast<size_t>(i)] = sa[static_cast<size_t>(o[0])] + sb[static_cast<size_t>(o[1])];
      });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_string_concat(KernelRegistry& r) {
  r.add("StringConcat", 20, string_concat_kernel, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
