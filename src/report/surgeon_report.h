// `onnxdbg surgeon --json`: what an edit did (sanitize's steps, to-fp16's counts) and what the
// final check found, as JSON objects the CLI puts into its one output object.
#pragma once

#include <nlohmann/json.hpp>

#include "surgeon/surgeon.h"

namespace onnxdbg::report {

/// {"nodes_folded", "subgraph_nodes_folded", "initializers_added", "passes", "skipped_large",
///  "notes": [...]}: counts of nodes and initializers, `passes` the fold + shape-inference rounds.
nlohmann::json fold_stats_json(const surgeon::FoldStats& stats);

/// {"nodes_before", "nodes_after", "overridden_inputs": ["x: 1x3x8x8"], "fold": fold_stats_json
///  or null, "cleanup": {"dead_nodes", "unused_initializers"} or null, "moved_nodes": n or null
///  (toposort), "seconds", "summary"}: null where the step was not asked for; seconds of wall time.
nlohmann::json sanitize_report_json(const surgeon::SanitizeReport& report);

/// {"initializers_converted", "constants_converted", "casts_inserted", "blocked_nodes"}.
nlohmann::json fp16_stats_json(const surgeon::Fp16Stats& stats);

/// {"errors": n, "messages": ["rule: message", ...]}: every lint error of the edited model.
nlohmann::json edit_check_json(const surgeon::EditCheck& check);

}  // namespace onnxdbg::report
