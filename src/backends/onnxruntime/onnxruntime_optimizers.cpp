// ONNX Runtime 1.29's graph transformers and rewrite rules (onnxruntime_optimizers.h), in the
// order its CPU session applies them.
#include "backends/onnxruntime/onnxruntime_optimizers.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace onnxdbg {

namespace {

// ORT 1.29's CPU session, level by level, in the order it applies them.
constexpr OrtOptimizer kAll[] = {
    // Level 1 (basic)
    {"Level1_RuleBasedTransformer", 1, false},
    {"DoubleQDQPairsRemover", 1, false},
    {"ConstantSharing", 1, false},
    {"CommonSubexpressionElimination", 1, false},
    {"ConstantFolding", 1, false},
    {"MatMulAddFusion", 1, false},
    {"ReshapeFusion", 1, false},
    {"FreeDimensionOverrideTransformer", 1, false},
    {"SliceConcatToSpaceToDepthFusion", 1, false},
    {"GeluFusionL1", 1, false},
    {"LayerNormFusionL1", 1, false},
    {"QDQPropagationTransformer", 1, false},
    {"WeightBiasQuantization", 1, false},
    {"EnsureUniqueDQForNodeUnit", 1, false},
    {"WhereDummyDq", 1, false},
    {"DQMatMulNBitsFusion", 1, false},
    {"TransposeOptimizer", 1, false},
    {"EliminateIdentity", 1, true},
    {"EliminateSlice", 1, true},
    {"UnsqueezeElimination", 1, true},
    {"EliminateDropout", 1, true},
    {"ExpandElimination", 1, true},
    {"CastElimination", 1, true},
    {"CastChainElimination", 1, true},
    {"PreShapeNodeElimination", 1, true},
    {"NoopElimination", 1, true},
    {"DivMulFusion", 1, true},
    {"FuseReluClip", 1, true},
    {"GemmSumFusion", 1, true},
    {"GemmTransposeFusion", 1, true},
    {"NotWhereFusion", 1, true},
    {"ConvAddFusion", 1, true},
    {"ConvMulFusion", 1, true},
    {"ConvBNFusion", 1, true},
    {"Pad_Fusion", 1, true},
    {"MatMul_BatchNormalization_Fusion", 1, true},
    {"LabelEncoderFusion", 1, true},
    // Level 2 (extended)
    {"Level2_RuleBasedTransformer", 2, false},
    {"TransposeOptimizer_CPUExecutionProvider", 2, false},
    {"QDQS8ToU8Transformer", 2, false},
    {"QDQSelectorActionTransformer", 2, false},
    {"GemmActivationFusion", 2, false},
    {"MatMulIntegerToFloatFusion", 2, false},
    {"DynamicQuantizeMatMulFusion", 2, false},
    {"ConvActivationFusion", 2, false},
    {"GeluFusionL2", 2, false},
    {"LayerNormFusionL2", 2, false},
    {"SimplifiedLayerNormFusion", 2, false},
    {"AttentionFusion", 2, false},
    {"EmbedLayerNormFusion", 2, false},
    {"GatherSliceToSplitFusion", 2, false},
    {"GatherToSliceFusion", 2, false},
    {"MatmulTransposeFusion", 2, false},
    {"BiasGeluFusion", 2, false},
    {"GroupQueryAttentionFusion", 2, false},
    {"SkipLayerNormFusion", 2, false},
    {"BiasSkipLayerNormFusion", 2, false},
    {"FastGeluFusion", 2, false},
    {"QuickGeluFusion", 2, false},
    {"GeluApproximation", 2, false},
    {"BiasSoftmaxFusion", 2, false},
    {"BiasDropoutFusion", 2, false},
    {"MatMulScaleFusion", 2, false},
    {"MatMulActivationFusion", 2, false},
    {"Avx2WeightS8ToU8Transformer", 2, false},
    {"MatMulNBitsFusion", 2, false},
    {"GroupQueryAttentionPreNormFusion", 2, false},
    {"QDQFinalCleanupTransformer", 2, false},
    {"ClipQuantRewrite", 2, true},
    {"ReluQuantRewrite", 2, true},
    // Level 3 (layout) and 4 (all)
    {"NchwcTransformer", 3, false},
    {"NhwcTransformer", 3, false},
    {"ConvAddActivationFusion", 3, false},
    {"FuseFp16InitializerToFp32NodeTransformer", 4, false},
};

}  // namespace

const std::vector<OrtOptimizer>& ort_optimizers() {
  static const std::vector<OrtOptimizer> all(std::begin(kAll), std::end(kAll));
  return all;
}

std::vector<std::string> rules_of_transformer(const std::string& name) {
  int level = 0;
  if (name == "Level1_RuleBasedTransformer") level = 1;
  if (name == "Level2_RuleBasedTransformer") level = 2;
  std::vector<std::string> rules;
  for (const auto& o : ort_optimizers())
    if (o.rule && o.level == level) rules.emplace_back(o.name);
  // GemmTransposeFusion is a rule of both levels; the table lists it once, at level 1.
  if (level == 2) rules.emplace_back("GemmTransposeFusion");
  return rules;
}

std::vector<std::string> similar_ort_optimizers(const std::string& name) {
  auto plain = [](const std::string& s) {
    std::string p;
    for (char c : s)
      if (c != '_') p += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return p;
  };
  const std::string want = plain(name);
  std::vector<std::string> out;
  for (const auto& o : ort_optimizers()) {
    const std::string have = plain(o.name);
    if (have == want || have == want + "l1" || have == want + "l2") out.emplace_back(o.name);
  }
  return out;
}

bool is_known_ort_optimizer(const std::string& name) {
  const auto& all = ort_optimizers();
  return std::any_of(all.begin(), all.end(), [&](const OrtOptimizer& o) { return name == o.name; });
}

}  // namespace onnxdbg
