// Cast: converts input 0 to the element type named by attribute `to` (Cast-1/6/9/13/19/21/23/24/
// 25/28). Cast-1 names the type as a string ("FLOAT", "INT64"); from Cast-6 it is a
// TensorProto.DataType number. Cast-19 adds the float8 types and `saturate`, Cast-24 float8e8m0
// and `round_mode`; the other versions add element types only. Handles float16/bfloat16
// natively, so a cast to or from them rounds exactly once.
#include "core/onnx.h"
#include "reference/ops/cast_common.h"

namespace onnxdbg::reference {
namespace {

Status cast_to(KernelContext& ctx, int64_t to_code, const NarrowCast& narrow = {}) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(DType to, dtype_from_onnx(static_cast<int32_t>(to_code)));
  if (to == DType::kUndefined) return model_error(ctx.describe() + ": attribute 'to' is undefined");
  ODB_ASSIGN_OR_RETURN(Tensor out, cast_for_onnx(*x, to, narrow));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status cast_v6_kernel(KernelContext& ctx) {
  const auto* to = ctx.find_attr("to");
  if (!to) return model_error(ctx.describe() + " is missing its required attribute 'to'");
  return cast_to(ctx, to->i());
}

// Cast-19 (saturate) and, with kRoundMode, Cast-24 (round_mode).
template <bool kRoundMode>
Status cast_v19_kernel(KernelContext& ctx) {
  const auto* to = ctx.find_attr("to");
  if (!to) return model_error(ctx.describe() + " is missing its required attribute 'to'");
  ODB_ASSIGN_OR_RETURN(NarrowCast narrow, read_narrow_cast(ctx, kRoundMode));
  return cast_to(ctx, to->i(), narrow);
}

Status cast_v1_kernel(KernelContext& ctx) {
  const auto* to = ctx.find_attr("to");
  if (!to) return model_error(ctx.describe() + " is missing its required attribute 'to'");
  if (to->type() != onnx::AttributeProto::STRING) return cast_to(ctx, to->i());  // tolerate ints
  onnx::TensorProto_DataType code{};
  if (!onnx::TensorProto_DataType_Parse(to->s(), &code))
    return model_error(ctx.describe() + ": attribute 'to' names no element type: \"" + to->s() +
                       "\"");
  return cast_to(ctx, code);
}

}  // namespace

void register_cast(KernelRegistry& r) {
  r.add("Cast", 1, cast_v1_kernel, HalfMode::kNative);
  r.add("Cast", 6, cast_v6_kernel, HalfMode::kNative);  // 9 and 13: new types only
  // Cast-21 and 23 add int4/uint4 and float4e2m1 only.
  r.add("Cast", 19, cast_v19_kernel<false>, HalfMode::kNative).through(23);
  // Cast-25 and 28 add int2/uint2 and the float6 types only.
  r.add("Cast", 24, cast_v19_kernel<true>, HalfMode::kNative).through(28);
}

}  // namespace onnxdbg::reference
