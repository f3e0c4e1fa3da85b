// SequenceEmpty (ONNX SequenceEmpty-11): an empty sequence whose element type is the `dtype`
// attribute (float32 by default).
#include "reference/ops/sequence_common.h"

namespace onnxdbg::reference {
namespace {

Status sequence_empty(KernelContext& ctx) {
  auto dtype = dtype_from_onnx(static_cast<int32_t>(ctx.attr_int("dtype", 1)));
  if (!dtype || *dtype == DType::kUndefined)
    return model_error(ctx.describe() + ": 'dtype' " + std::to_string(ctx.attr_int("dtype", 1)) +
                       " is not a tensor element type");
  Sequence empty;
  empty.elem_type = *dtype;
  ctx.set_output_value(0, std::move(empty));
  return Status::ok();
}

}  // namespace

void register_sequence_empty(KernelRegistry& r) {
  r.add("SequenceEmpty", 11, sequence_empty, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
