// ONNX shape inference (the linked ONNX library) made safe to call on any model: the crash
// workaround (placeholder types) shared by lint and surgeon, and a light copy that skips large
// weights. Nothing here runs a model.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "core/onnx.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

/// Gives every value of `g` that a node produces, and every node input that `g` does not define
/// and `defined_outside` does not know, an empty placeholder type (a ValueInfoProto whose
/// TypeProto is VALUE_NOT_SET; inference fills it in). ONNX 1.12's data propagation dereferences
/// a missing input type and segfaults when a Shape node reads such a value (after a custom op, an
/// undefined name, a failed node). Names that already have an input, initializer, output or
/// value_info entry are left alone. Does not recurse into subgraphs.
void add_inference_placeholders(onnx::GraphProto& g,
                                const std::function<bool(const std::string&)>& defined_outside);

/// Whether ONNX element type `t` (an onnx::TensorProto::DataType) is a floating-point type:
/// FLOAT, DOUBLE, FLOAT16 or BFLOAT16.
bool is_float_type(int32_t t);

/// Float initializers above this many elements are copied without their values for inference.
inline constexpr int64_t kInferenceMaxCopiedFloats = 4096;

/// Copies initializer `src` into `dst` for shape inference: whole, unless it is a float tensor
/// (is_float_type) of more than kInferenceMaxCopiedFloats elements, which gets only its name,
/// data type and dims (inference needs no values there, and copying large weights costs time).
void copy_initializer(const onnx::TensorProto& src, onnx::TensorProto* dst);

/// Runs onnx::shape_inference::InferShapes(model, strict_mode, data propagation, no type check)
/// in a forked child process and takes the inferred model back, so that a crash inside Debian's
/// libonnx 1.12 on a hostile model (Conv with strides 0 divides by zero, a function calling
/// itself recurses without end) is an error, never the end of onnxdbg (issue 17). `model` gets
/// what inference wrote even when it stopped at an error. Returns "" on success, ONNX's exception
/// text, or a sentence saying that inference crashed (and with which signal) or stopped making
/// progress: a child that uses no CPU for 3 s without replying (a lock another thread held at the
/// fork) is killed and run once more. Test hook: ONNXDBG_DEBUG_SHAPE_INFERENCE_STALL=first|all
/// makes the first or every child block.
std::string run_onnx_shape_inference(onnx::ModelProto& model, bool strict);

/// Result of infer_shapes: the main graph's types by name (value_info and graph outputs, only
/// entries inference filled in), and the error inference stopped at ("" when none).
struct InferredTypes {
  std::unordered_map<std::string, onnx::TypeProto> types;
  /// The same for the values of every subgraph (If/Loop/Scan bodies, nested ones included); a
  /// name that two subgraphs define with different types is left out.
  std::unordered_map<std::string, onnx::TypeProto> subgraph_types;
  std::string error;
};

/// Runs ONNX shape inference with data propagation on a copy of `model` whose value_info is
/// dropped (stale entries must not win) and whose float weights over 4096 elements carry only
/// their type and dims (inference needs no values there). Graph output types are kept unless
/// `reinfer_outputs`, which clears them so inference derives them (dims included). Subgraphs get
/// placeholders too. `strict` makes inference stop at the first node error (reported in
/// `error`); otherwise it infers what it can. Never throws, never fails: errors go to `error`.
InferredTypes infer_shapes(const onnx::ModelProto& model, bool strict = false,
                           bool reinfer_outputs = false);

/// Replaces the main graph's value_info with infer_shapes' result (graph inputs, outputs and
/// initializers excluded; entries whose type inference left unset dropped) and, when
/// `update_outputs`, sets graph output types to the inferred ones where inference knew them.
/// Returns infer_shapes' error ("" when none).
std::string refresh_value_info(onnx::ModelProto& model, bool update_outputs);

}  // namespace onnxdbg
