// What `onnxdbg lint` finds: one Finding per problem, with its rule, severity, node and graph.
// The result type of api::lint (and of the viewer's lint overlay); the rules in src/lint/ make
// them.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "onnxdbg/enum_names.h"

namespace onnxdbg::lint {

/// How bad a finding is.
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

/// Which rules api::lint runs.
struct LintOptions {
  /// Rule names not to run. Unknown names are an error (kInvalidArgument).
  std::set<std::string> disabled_rules;
};

/// Findings per severity.
struct FindingCounts {
  int64_t error = 0;
  int64_t warning = 0;
  int64_t info = 0;
};
/// Counts `findings` by severity.
FindingCounts count_findings(const std::vector<Finding>& findings);

}  // namespace onnxdbg::lint
