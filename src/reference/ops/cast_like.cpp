// CastLike: converts input 0 to the element type of input 1 (CastLike-15/19/21/23/24/25), with
// Cast's semantics: CastLike-19 adds `saturate`, CastLike-24 `round_mode`, the other versions
// element types only.
#include "reference/ops/cast_common.h"

namespace onnxdbg::reference {
namespace {

// CastLike-15; from 19 with `saturate` and, with kRoundMode (24 on), `round_mode`.
template <int kSince>
Status cast_like_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* like, ctx.required_input(1));
  NarrowCast narrow;
  if constexpr (kSince >= 19) {
    ODB_ASSIGN_OR_RETURN(narrow, read_narrow_cast(ctx, kSince >= 24));
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, cast_for_onnx(*x, like->dtype(), narrow));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_cast_like(KernelRegistry& r) {
  r.add("CastLike", 15, cast_like_kernel<15>, HalfMode::kNative);
  // CastLike-21 and 23 add int4/uint4 and float4e2m1 only.
  r.add("CastLike", 19, cast_like_kernel<19>, HalfMode::kNative).through(23);
  // CastLike-25 adds int2/uint2 only.
  r.add("CastLike", 24, cast_like_kernel<24>, HalfMode::kNative).through(25);
}

}  // namespace onnxdbg::reference
