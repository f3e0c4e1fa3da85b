// `onnxdbg reduce`'s engine: shrink a failing model to a minimal failing one (Polygraphy's
// `debug reduce`, plus delta debugging over arbitrary node subsets, llvm-reduce's verify-first,
// parallel candidates and best-so-far output). The front door of src/reduce/: candidate.h
// (what a candidate is), oracle.h (is it still failing?), reducer.h (the driver),
// strategies/ (how candidates are proposed).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reduce/candidate.h"
#include "reduce/oracle.h"
#include "reduce/reducer.h"

namespace onnxdbg::reduce {

struct ReduceOptions {
  /// Strategies of one pass, in order (see strategies_for_mode); passes repeat while a pass
  /// removes nodes.
  std::vector<std::string> strategies;
  ReducerOptions reducer;          ///< output, journal, resume, artifacts, progress
  std::filesystem::path min_good;  ///< --min-good: where to write the closest passing model
  bool confirm = true;             ///< re-test the result without the cache (flakiness)
  /// Note when the oracle failed every candidate (a check failing for its own reasons); off for
  /// a reduction that continues another (api::reduce inside If branches), where that is expected.
  bool note_if_all_fail = true;
};

/// Reduces `original` (prepared with prepare_original) with `oracle`: tests the original first
/// (report.original_fails = false and nothing else done when it passes), then runs the
/// strategies pass after pass until a pass removes no node, writing the best model to
/// options.reducer.output after every success and, at the end, the min-good model. Errors: the
/// oracle's (the check command does not exist: before any reduction), an unknown strategy, the
/// output cannot be written (the best model so far is the one last written, if any).
Expected<ReduceReport> reduce_model(const Original& original, Oracle& oracle,
                                    const ReduceOptions& options);

/// The report as JSON (--json): original_fails, oracle, nodes_before, nodes_after,
/// kept_nodes, kept_op_types, inputs, outputs, passes, oracle_calls, cache_hits,
/// invalid_skipped, invalid_reasons {reason: count}, signature (null when none),
/// failed_differently, timeouts, seconds, strategies[] {name, runs, oracle_calls, nodes_removed,
/// seconds}, output, min_good, notes, flaky.
nlohmann::json report_json(const ReduceReport& report);

}  // namespace onnxdbg::reduce
