// Cast: converts input 0 to the element type named by attribute `to` (Cast-1/6/9/13). Cast-1 names
// the type as a string ("FLOAT", "INT64"); from Cast-6 it is a TensorProto.DataType number.
// Handles float16/bfloat16 natively, so a cast to or from them rounds exactly once.
#include "core/onnx.h"
#include "reference/ops/cast_common.h"

namespace onnxdbg::reference {
namespace {

Status cast_to(KernelContext& ctx, int64_t to_code) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(DType to, dtype_from_onnx(static_cast<int32_t>(to_code)));
  if (to == DType::kUndefined) return model_error(ctx.describe() + ": attribute 'to' is undefined");
  ODB_ASSIGN_OR_RETURN(Tensor out, cast_for_onnx(*x, to));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status cast_v6_kernel(KernelContext& ctx) {
  const auto* to = ctx.find_attr("to");
  if (!to) return model_error(ctx.describe() + " is missing its required attribute 'to'");
  return cast_to(ctx, to->i());
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
  // Cast-19..28 added float8/int4/float4/int2/float6 and, for float8 targets only, `saturate`
  // and `round_mode`: this kernel refuses those types, so the rest of its semantics are unchanged.
  r.add("Cast", 6, cast_v6_kernel, HalfMode::kNative).through(28);
}

}  // namespace onnxdbg::reference
