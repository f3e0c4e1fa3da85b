// Structural checks of ONNX models ("lint"): the ONNX checker, strict shape inference and our own
// rules (undefined inputs, truncated outputs, ordering, unknown ops, attributes, ...), each rule
// one file under lint/rules/. Every rule runs over the main graph and every subgraph and all
// findings are collected in one pass, so one run shows every problem rather than the first.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.h"
#include "model/model.h"
#include "onnxdbg/status.h"

namespace onnxdbg::lint {

enum class Severity {
  kError,    ///< the model breaks the ONNX spec; runtimes will refuse it or compute nonsense
  kWarning,  ///< legal but suspicious, or something lint could not verify
  kInfo,     ///< worth knowing (dead nodes, unnamed nodes, custom domains)
};

/// "error", "warning", "info".
inline constexpr EnumNames<Severity, 3> kSeverityNames{
    {{Severity::kError, "error"}, {Severity::kWarning, "warning"}, {Severity::kInfo, "info"}}};
std::string_view severity_name(Severity s);  ///< "error" | "warning" | "info"

/// One problem found by one rule.
struct Finding {
  std::string rule;  ///< registered rule name, e.g. "undefined_input" (= its file name)
  Severity severity = Severity::kError;
  std::string node;         ///< node name ("" when unnamed or not about a node)
  int64_t node_index = -1;  ///< index in its graph's node list; -1 when not about a node
  std::string op_type;      ///< "" when not about a node
  std::string graph;        ///< "main", or "main/If_3:then_branch" for a subgraph
  std::string message;      ///< one sentence
  /// node_label (model/graph.h) of the node, "#12 Conv 'c1'"; "" when not about a node. Last and
  /// default-initialised so findings written as {rule, severity, ..., message} stay valid.
  std::string label = {};
};

struct LintOptions {
  /// Rule names not to run. Unknown names are an error (kInvalidArgument).
  std::set<std::string> disabled_rules;
};

struct FindingCounts {
  int64_t error = 0;
  int64_t warning = 0;
  int64_t info = 0;
};
FindingCounts count_findings(const std::vector<Finding>& findings);

/// Every registered rule name, in registry (rules.def) order.
std::vector<std::string> rule_names();
/// The rules rules.def marks kStructural (their errors break the ONNX spec where no runtime can
/// run the model: `run` stops before any backend), in registry order.
std::vector<std::string> structural_rule_names();

/// Runs every enabled rule over `model` (main graph and all subgraphs, each with its outer scope).
/// Findings are sorted by graph (main first, then subgraphs in discovery order), then node index
/// (model-level findings, index -1, first), then severity (errors first). The model is never
/// modified. Models whose IR or opset is newer than the linked ONNX (1.23) are checked against the
/// newest known schemas and what cannot be verified is reported as warnings, never errors. Errors:
/// kInvalidArgument for an unknown rule name in `options`. A model with problems is not an error:
/// its problems are the findings. A finding names an `onnxdbg surgeon` command as its fix only when
/// lint made that command's edit on a copy and the result has no lint errors (so the command exits
/// 0 and the finding is gone); the command names `model.path` and an output next to it. Otherwise,
/// and for models without a path, the fix is said in words.
Expected<std::vector<Finding>> lint_model(const LoadedModel& model,
                                          const LintOptions& options = {});

}  // namespace onnxdbg::lint
