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
  // Branch-free, so that the loop over a tensor vectorises.
  const bool nan = (h & 0x7fffu) > 0x7c00u, negative = h > 0x8000u;
  Float16 r;
  r.bits = static_cast<uint16_t>(nan ? (h | 0x0200u) : (negative ? 0u : h));
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
