// What converters leave behind: the TensorFlow op types tf2onnx keeps, under their TensorFlow
// names, for a node it cannot convert at its target opset (it logs "Tensorflow op [...] is not
// supported" and still writes the model), with ONNX's counterpart of each; and the command that
// re-converts a model at another opset, by the converter its producer_name names. Used by the
// lint rules unconverted_op (the TensorFlow leftovers), unknown_op (which leaves those to it)
// and op_not_in_opset (an ONNX op newer than the opset a converter targeted).
#pragma once

#include <optional>
#include <string>

#include "core/onnx.h"

namespace onnxdbg::lint {

/// ONNX's counterpart of TensorFlow op type `op` (tf.raw_ops names: "Cumsum" -> "CumSum",
/// "ConcatV2" -> "Concat", "FusedBatchNormV3" -> "BatchNormalization"), or nullopt for a name
/// that is not a TensorFlow op with an ONNX counterpart of another name. Names ONNX shares with
/// TensorFlow (MatMul, Relu, ...) are not listed: a node of such a type is an ONNX node.
std::optional<std::string> onnx_counterpart_of_tf_op(const std::string& op);

/// Whether `model` names a converter reconvert_hint knows how to run again (producer_name
/// "tf2onnx" or "pytorch"): its nodes then have the forms of the opset it targeted.
bool made_by_known_converter(const onnx::ModelProto& model);

/// How to re-convert `model` so that it targets default-domain opset `opset`, as a sentence
/// fragment in words (no backquotes: lint quotes only commands that run as pasted): for
/// producer_name "tf2onnx" "convert the TensorFlow model again with python -m tf2onnx.convert ...
/// --opset 11", for "pytorch" "export the module again with torch.onnx.export(...,
/// opset_version=14)", else the converter named by its producer with the opset.
std::string reconvert_hint(const onnx::ModelProto& model, int64_t opset);

}  // namespace onnxdbg::lint
