// Rule unconverted_op: a default-domain node whose op type is TensorFlow's name for an op ONNX has
// under another name (Cumsum, ConcatV2, FusedBatchNormV3, ...): what tf2onnx writes when it
// cannot convert a node at the opset it targets. It logs "Tensorflow op [...] is not supported"
// and still writes the model, so the failure shows only where the model is run. Names ONNX's
// counterpart, the opset that has it and how to re-convert (converter_ops.h).
#include "lint/converter_ops.h"
#include "lint/rule.h"

namespace onnxdbg::lint {

void lint_unconverted_op(RuleContext& ctx, const GraphInfo& g) {
  const auto& histories = op_histories();
  auto onnx_ops = histories.find("");
  if (onnx_ops == histories.end()) return;
  const int64_t opset = ctx.opset("");
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    if (!canonical_domain(n.domain()).empty() || ctx.is_local_function(n)) continue;
    if (onnx_ops->second.count(n.op_type())) continue;  // an ONNX op of that name
    const auto counterpart = onnx_counterpart_of_tf_op(n.op_type());
    if (!counterpart) continue;
    auto h = onnx_ops->second.find(*counterpart);
    if (h == onnx_ops->second.end() || h->second.since_versions.empty()) continue;
    const int64_t since = h->second.since_versions.front();
    std::string msg = "'" + n.op_type() +
                      "' is a TensorFlow op the converter left unconverted (tf2onnx keeps a node "
                      "it cannot convert at its target opset under its TensorFlow type); "
                      "ONNX's counterpart is " +
                      *counterpart + ", from opset " + std::to_string(since);
    if (since > opset)
      msg += ", and this model imports opset " + std::to_string(opset) + ": " +
             reconvert_hint(ctx.proto(), since) + ".";
    else
      msg += ", which this model's opset " + std::to_string(opset) +
             " has: the converter could not map this node (its attributes, dtypes or inputs); "
             "its log names the reason.";
    ctx.report(Severity::kError, g, i, msg);
  }
}

}  // namespace onnxdbg::lint
