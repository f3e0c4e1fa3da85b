// The graph transformers and rewrite rules of ONNX Runtime 1.29's CPU session, by the names its
// `optimization.disable_specified_optimizers` config entry matches (GraphTransformer::Name(),
// RewriteRule::Name(): `Pad_Fusion`, not the class PadFusion). The source is ORT's own log (the
// "Applying graph transformer <Name>" lines at each level) and graph_transformer_utils.cc. Used
// to warn about a name ORT would silently ignore (`onnxruntime:disable=`) and to open a
// rule-based transformer into its rules (`bisect-optimizers`).
#pragma once

#include <string>
#include <vector>

namespace onnxdbg {

/// One transformer or rule: its name, its level (1 basic, 2 extended, 3 layout, 4 all) and
/// whether it is a rewrite rule inside that level's "Level<N>_RuleBasedTransformer".
struct OrtOptimizer {
  const char* name;
  int level;
  bool rule;
};

/// Every transformer and rule onnxdbg knows of ONNX Runtime 1.29's CPU session, by level.
const std::vector<OrtOptimizer>& ort_optimizers();

/// The rules of "Level1_RuleBasedTransformer" / "Level2_RuleBasedTransformer"; empty for any
/// other name.
std::vector<std::string> rules_of_transformer(const std::string& name);

/// Whether `name` is one of ort_optimizers().
bool is_known_ort_optimizer(const std::string& name);

/// The known names `name` was likely meant as: equal once case and '_' are ignored (PadFusion ->
/// Pad_Fusion), or that plus a level suffix (GeluFusion -> GeluFusionL1, GeluFusionL2).
std::vector<std::string> similar_ort_optimizers(const std::string& name);

}  // namespace onnxdbg
