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

struct ReduceReport {
  bool original_fails = false;  ///< false: nothing was reduced (the oracle passes the original)
  std::string original_detail;  ///< the oracle's verdict line on the original
  std::string oracle;           ///< Oracle::describe()
  int64_t nodes_before = 0, nodes_after = 0;
  std::vector<std::string> kept_nodes;       ///< node_label of each: "#12 Conv 'c1'"
  std::vector<std::string> kept_op_types;    ///< op type of each kept node
  std::vector<std::string> inputs, outputs;  ///< of the reduced model
  /// Per input sample, the values the reduced model's graph inputs take (golden values of the
  /// tensors they stand for); empty without golden values. What a reduction that starts again
  /// from the reduced model (api::reduce inside If branches) feeds it.
  std::vector<TensorMap> feeds;
  int64_t passes = 0;
  /// oracle_calls: the original, each candidate tested and the confirmation; cache_hits:
  /// candidates answered from the cache; invalid_skipped: candidates dropped before the oracle
  /// (invalid_reasons: how many for each reason).
  int64_t oracle_calls = 0, cache_hits = 0, invalid_skipped = 0, timeouts = 0;
  std::map<std::string, int64_t> invalid_reasons;
  /// The original's failure signature (masked; "" when the oracle gives none) and how many
  /// candidates failed otherwise, counted as passes (never with ReducerOptions::any_failure).
  std::string signature;
  int64_t failed_differently = 0;
  double seconds = 0;
  std::vector<StrategyStats> strategies;  ///< in the order they first ran
  std::string output;                     ///< the reduced model's path
  std::string min_good;                   ///< written min-good model, "" when none
  int64_t min_good_nodes = 0;
  std::string golden_note;         ///< why there are no golden values, "" when there are
  std::vector<std::string> notes;  ///< flaky oracle, verification off, artifacts trouble
  bool flaky = false;
  /// The oracle passed at least one candidate (so it can pass: without, a note says it may fail
  /// for a reason other than the model).
  bool saw_passing = false;
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
