// Relu: elementwise max(x, 0) (Relu-1/6/13/14; 14 added integer types); NaN stays NaN.
// float16 is computed on its bit patterns (HalfMode::kNativeFloat16: the same bits as the float32
// round trip, without two whole-tensor casts); bfloat16 arrives as float32 and is rounded back by
// the interpreter.
#include <cmath>
#include <cstdint>

#include "reference/ops/unary_common.h"

namespace onnxdbg::reference {
namespace {

// Relu of one float16 bit pattern as the float32 path gives it (upcast, x < 0 ? 0 : x, round
// back): a negative number other than -0 becomes +0, -0 stays -0, a NaN comes back quiet (the
// round trip through float32 sets its top mantissa bit, keeping its payload and sign), anything
// else is unchanged.
inline Float16 relu_half(Float16 v) {
  const uint16_t h = v.bits;
  Float16 r;
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0)
    r.bits = static_cast<uint16_t>(h | 0x0200u);
  else
    r.bits = (h & 0x8000u) != 0 && h != 0x8000u ? uint16_t{0} : h;
  return r;
}

Status relu_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->dtype() == DType::kFloat16) {
    map_input_of_same_type<Float16>(ctx, *x, [](Float16 v) { return relu_half(v); });
    return Status::ok();
  }
  return unary_numeric_op(ctx, [](auto v) {
    using T = decltype(v);
    return v < T{0} ? T{0} : v;
  });
}

}  // namespace

void register_relu(KernelRegistry& r) { r.add("Relu", 1, relu_kernel, HalfMode::kNativeFloat16); }

}  // namespace onnxdbg::reference
