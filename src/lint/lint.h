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

#include "model/model.h"
#include "onnxdbg/findings.h"
#include "onnxdbg/status.h"

namespace onnxdbg::lint {

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
