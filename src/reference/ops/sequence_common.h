// Shared by the sequence and optional kernels: reading inputs of a given value kind with errors
// that say what was expected and what came ("SequenceAt of node 'at' expects a sequence as input
// 0, got a tensor"), and ONNX's position rule for SequenceAt/Insert/Erase.
#pragma once

#include <string>

#include "onnxdbg/value.h"
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {

/// "<Op> of node '<name>' expects <kind> as input <i>, got <kind of v>".
inline Status wrong_kind(const KernelContext& ctx, size_t i, const std::string& want,
                         const Value& got) {
  return model_error(ctx.node().op_type() + " of node '" + ctx.node().name() + "' expects " + want +
                     " as input " + std::to_string(i) + ", got " + got.kind_name());
}

/// Input i, which must be present (any kind).
inline Expected<const Value*> required_value(const KernelContext& ctx, size_t i) {
  const Value* v = ctx.input_value(i);
  if (!v)
    return model_error(ctx.describe() + " is missing its required input " + std::to_string(i));
  return v;
}

/// Input i as a sequence of tensors; kModelError naming the node when it is missing, of another
/// kind, or a sequence of maps (ai.onnx.ml ZipMap's output, which these kernels do not take).
inline Expected<const Sequence*> sequence_input(const KernelContext& ctx, size_t i) {
  ODB_ASSIGN_OR_RETURN(const Value* v, required_value(ctx, i));
  if (!v->is_sequence()) return wrong_kind(ctx, i, "a sequence", *v);
  if (v->as_sequence()->holds_maps())
    return model_error(ctx.node().op_type() + " of node '" + ctx.node().name() +
                       "' expects a sequence of tensors as input " + std::to_string(i) +
                       ", got a " + v->describe());
  return v->as_sequence();
}

/// An optional position input (a one-element int32/int64 tensor), normalised against a sequence
/// of `size` elements: valid in [-size, size - 1], or [-size, size] when `allow_end` (insertion).
/// Returns `def` when the input is omitted.
inline Expected<int64_t> sequence_position(const KernelContext& ctx, size_t i, int64_t size,
                                           bool allow_end, int64_t def) {
  const Value* v = ctx.input_value(i);
  if (!v) return def;
  if (!v->is_tensor()) return wrong_kind(ctx, i, "a tensor", *v);
  ODB_ASSIGN_OR_RETURN(const int64_t p, scalar_int_of(ctx, v->tensor(), "position"));
  const int64_t hi = allow_end ? size : size - 1;
  if (p < -size || p > hi)
    return model_error(ctx.describe() + ": position " + std::to_string(p) +
                       " is out of range for a sequence of " + std::to_string(size) +
                       " tensors (valid: " + std::to_string(-size) + " to " + std::to_string(hi) +
                       ")");
  return p < 0 ? p + size : p;
}

/// Checks that `t` may join a sequence of element type `elem` (kUndefined accepts anything).
inline Status check_element_type(const KernelContext& ctx, DType elem, const Tensor& t) {
  if (elem != DType::kUndefined && t.dtype() != elem)
    return model_error(ctx.describe() + ": a " + std::string(dtype_name(t.dtype())) +
                       " tensor cannot join a sequence of " + std::string(dtype_name(elem)) +
                       " tensors");
  return Status::ok();
}

}  // namespace onnxdbg::reference
