// BitCast: reinterprets the bytes of input 0 as the element type of attribute `to`, of the same
// bit width, keeping the shape (BitCast-26). Tensors are stored little endian, as the spec asks.
#include <cstring>

#include "reference/kernel_util.h"

namespace onnxdbg::reference {
namespace {

Status bit_cast_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const auto* to_attr = ctx.find_attr("to");
  if (!to_attr) return model_error(ctx.describe() + " is missing its required attribute 'to'");
  auto to = dtype_from_onnx(static_cast<int32_t>(to_attr->i()));
  if (!to)
    return std::move(to).status().with_context("reading attribute 'to' of " + ctx.describe());
  if (*to == DType::kUndefined || *to == DType::kString || x->dtype() == DType::kString)
    return model_error(ctx.describe() + " cannot bit-cast " + std::string(dtype_name(x->dtype())) +
                       " to " + std::string(dtype_name(*to)) + " (strings have no bit pattern)");
  // dtype_bits, not dtype_size: int4 and int8 both take a byte in memory but 4 and 8 bits.
  if (dtype_bits(*to) != dtype_bits(x->dtype()))
    return model_error(ctx.describe() + " cannot bit-cast " + std::string(dtype_name(x->dtype())) +
                       " to " + std::string(dtype_name(*to)) + ": their bit widths differ");
  if (*to == DType::kBool) {
    // A byte other than 0 or 1 is no bool value (reading it as a C++ bool is undefined).
    const auto* p = reinterpret_cast<const uint8_t*>(x->raw());
    for (int64_t i = 0; i < x->numel(); ++i)
      if (p[i] > 1)
        return model_error(ctx.describe() + " cannot bit-cast byte value " + std::to_string(p[i]) +
                           " at element " + std::to_string(i) +
                           " to bool (only 0 and 1 are bool values)");
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make_uninitialized(*to, x->shape()));
  if (x->nbytes() > 0) std::memcpy(out.raw(), x->raw(), x->nbytes());
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_bit_cast(KernelRegistry& r) {
  r.add("BitCast", 26, bit_cast_kernel, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
