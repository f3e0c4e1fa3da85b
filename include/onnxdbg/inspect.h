// onnxdbg::api::inspect and api::lint: what is in a model (`onnxdbg inspect`) and every
// structural problem it has (`onnxdbg lint`), each one call with one result and its renderings.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "onnxdbg/common.h"
#include "onnxdbg/findings.h"
#include "onnxdbg/model.h"
#include "onnxdbg/model_summary.h"

namespace onnxdbg::api {

struct InspectOptions {
  std::filesystem::path model;
  /// basic: summary; layers: + every node and subgraph; attrs: + attributes; weights: +
  /// per-weight min/max/mean/std and NaN/Inf counts.
  std::string mode = "basic";
  /// Also every tensor of the main graph with its inferred dtype and shape (symbolic dims by
  /// name) and its producer: `inspect --show-tensors`.
  bool show_tensors = false;
};

struct InspectResult {
  ModelSummary summary;  ///< opsets, inputs/outputs (symbolic dims by name), op types, ...
  Messages messages;
};

/// Summarises options.model. Errors: kInvalidArgument for an unknown mode; those of load_model
/// (a missing or malformed file) and summarize_model (unreadable weights).
Expected<InspectResult> inspect(const InspectOptions& options);

/// The JSON `onnxdbg inspect --json` prints (inspect/inspect.h summary_to_json).
nlohmann::json to_json(const InspectResult& result);
/// The text `onnxdbg inspect` prints.
void print_text(const InspectResult& result, std::ostream& os);

struct LintOptions {
  std::filesystem::path model;
  std::set<std::string> disabled_rules;  ///< lint::rule_names() lists the rules
};

struct LintResult {
  Model model;  ///< as loaded (for the HTML view)
  std::vector<lint::Finding> findings;
  Messages messages;
  /// Whether any finding is an error (the CLI then exits with status 1).
  bool has_errors() const;
};

/// Runs every lint rule (ONNX checker, strict shape inference and onnxdbg's own rules) on
/// options.model in one pass. Errors: those of load_model (a file that cannot be read as a
/// model at all), kInvalidArgument for an unknown rule name; a model that loads is linted,
/// whatever its problems.
Expected<LintResult> lint(const LintOptions& options);

/// The name of every lint rule (src/lint/rules/rules.def), for --disable and disabled_rules.
std::vector<std::string> lint_rule_names();

/// The JSON `onnxdbg lint --json` prints (report/lint_report.h).
nlohmann::json to_json(const LintResult& result);
/// The tables `onnxdbg lint` prints, grouped by graph.
void print_text(const LintResult& result, std::ostream& os, bool color);

}  // namespace onnxdbg::api
