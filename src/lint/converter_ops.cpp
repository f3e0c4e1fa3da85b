// The TensorFlow leftovers table and the re-convert hint (converter_ops.h).
#include "lint/converter_ops.h"

#include <map>

namespace onnxdbg::lint {

std::optional<std::string> onnx_counterpart_of_tf_op(const std::string& op) {
  // TensorFlow raw op -> the ONNX op a converter maps it to (the main one, where it takes
  // several). Public facts of both op sets (tf.raw_ops, ONNX Operators.md).
  static const std::map<std::string, std::string> kCounterparts = {
      {"AddV2", "Add"},
      {"All", "ReduceMin"},
      {"Any", "ReduceMax"},
      {"AvgPool", "AveragePool"},
      {"BatchMatMul", "MatMul"},
      {"BatchMatMulV2", "MatMul"},
      {"BatchMatMulV3", "MatMul"},
      {"BiasAdd", "Add"},
      {"BroadcastTo", "Expand"},
      {"ClipByValue", "Clip"},
      {"ConcatV2", "Concat"},
      {"Conv2D", "Conv"},
      {"Conv2DBackpropInput", "ConvTranspose"},
      {"Conv3D", "Conv"},
      {"Cumprod", "CumProd"},
      {"Cumsum", "CumSum"},
      {"DepthwiseConv2dNative", "Conv"},
      {"ExpandDims", "Unsqueeze"},
      {"Fill", "Expand"},
      {"FloorDiv", "Div"},
      {"FloorMod", "Mod"},
      {"FusedBatchNorm", "BatchNormalization"},
      {"FusedBatchNormV3", "BatchNormalization"},
      {"GatherNd", "GatherND"},
      {"GatherV2", "Gather"},
      {"LogicalAnd", "And"},
      {"LogicalNot", "Not"},
      {"LogicalOr", "Or"},
      {"MatrixBandPart", "Trilu"},
      {"Maximum", "Max"},
      {"Minimum", "Min"},
      {"MirrorPad", "Pad"},
      {"NonMaxSuppressionV3", "NonMaxSuppression"},
      {"NonMaxSuppressionV4", "NonMaxSuppression"},
      {"NonMaxSuppressionV5", "NonMaxSuppression"},
      {"Pack", "Concat"},
      {"PadV2", "Pad"},
      {"Prod", "ReduceProd"},
      {"RealDiv", "Div"},
      {"Relu6", "Clip"},
      {"ResizeBilinear", "Resize"},
      {"ResizeNearestNeighbor", "Resize"},
      {"ReverseV2", "Slice"},
      {"Rsqrt", "Sqrt"},
      {"ScatterNd", "ScatterND"},
      {"Select", "Where"},
      {"SelectV2", "Where"},
      {"SplitV", "Split"},
      {"Square", "Mul"},
      {"SquaredDifference", "Sub"},
      {"StatelessIf", "If"},
      {"StatelessWhile", "Loop"},
      {"StridedSlice", "Slice"},
      {"TopKV2", "TopK"},
      {"Unpack", "Split"},
      {"While", "Loop"},
      {"ZerosLike", "ConstantOfShape"},
  };
  auto it = kCounterparts.find(op);
  if (it == kCounterparts.end()) return std::nullopt;
  return it->second;
}

bool made_by_known_converter(const onnx::ModelProto& model) {
  return model.producer_name() == "tf2onnx" || model.producer_name() == "pytorch";
}

std::string reconvert_hint(const onnx::ModelProto& model, int64_t opset) {
  const std::string v = std::to_string(opset);
  const std::string& producer = model.producer_name();
  // In words, not backquoted: a quoted command is one lint promises runs as pasted, and these
  // need the user's own model and arguments.
  if (producer == "tf2onnx")
    return "convert the TensorFlow model again with python -m tf2onnx.convert ... --opset " + v;
  if (producer == "pytorch")
    return "export the module again with torch.onnx.export(..., opset_version=" + v + ")";
  return "re-convert at opset " + v + " with " +
         (producer.empty() ? std::string("the converter that wrote it")
                           : "the converter that wrote it ('" + producer + "')");
}

}  // namespace onnxdbg::lint
