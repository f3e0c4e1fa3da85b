// The options and the report of a reduction (`onnxdbg reduce`, Polygraphy's `debug reduce`):
// the --check command oracle's settings, the built-in oracle's failure kinds (--fail-on), and
// what the reduction did. What api::reduce takes and returns; src/reduce/ reduces.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnxdbg/enum_names.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg::batch {
class SharedExecutor;  // src/batch/executor.h: where --check commands run (reduce --executor ray)
}  // namespace onnxdbg::batch

namespace onnxdbg::reduce {

/// A candidate made into a model (src/reduce/candidate.h), as an oracle tests it.
struct BuiltCandidate;

/// --check CMD...: runs a command on the candidate written to --iter-artifact.
struct CheckOptions {
  std::vector<std::string> command;                  ///< argv; argv[0] is looked up on PATH
  std::string iter_artifact = "onnxdbg_debug.onnx";  ///< where the candidate is written
  /// Where the candidate's input values (sample 0, .npz) are written when there are golden
  /// values, so a check such as `onnxdbg run ... --load-inputs onnxdbg_debug_inputs.npz` sees
  /// the values the subgraph saw inside the full model.
  std::string iter_inputs = "onnxdbg_debug_inputs.npz";
  std::optional<int> fail_code;         ///< fail only on this exit code
  bool ignore_fail_code = false;        ///< the exit code never decides (only --fail-regex)
  std::vector<std::string> fail_regex;  ///< ECMAScript regexes searched in stdout and stderr
  double timeout_seconds = 0;           ///< 0: no timeout
  bool timeout_means_fail = false;      ///< --timeout-means fail|pass (default pass)
  int jobs = 1;                         ///< -j: checks run at once
  /// Folder for the per-job copies when jobs > 1 (each job writes into <work_dir>/job<K>/ and
  /// arguments naming iter_artifact / iter_inputs are rewritten to those paths).
  std::filesystem::path work_dir;
  /// Asked while a check runs: true ends it (and every process of its group) at once and the
  /// oracle call fails with ErrorCode::kCancelled (Ctrl-C or SIGTERM of the caller). Empty: never.
  std::function<bool()> cancelled;
  /// Where the checks run instead of as children of this process: each is a job of the executor
  /// (reduce --executor ray: a Ray task, the candidate and its inputs sent with it, the command
  /// found on the node's PATH or at its path). Each slot has its own folder then. Null: here.
  std::shared_ptr<batch::SharedExecutor> executor;
};

/// The built-in failures.
enum class FailOn {
  kMismatch,  ///< outputs of a backend differ from the first backend's beyond the tolerance
  kError,     ///< a backend refuses, crashes on, or fails to run the candidate
  kNan,       ///< an output holds NaN or Inf although every input is finite
};
inline constexpr EnumNames<FailOn, 3> kFailOnNames{
    {{FailOn::kMismatch, "mismatch"}, {FailOn::kError, "error"}, {FailOn::kNan, "nan"}}};
/// The condition named `name` (kFailOnNames). Errors: kInvalidArgument naming the valid ones.
Expected<FailOn> fail_on_from_name(const std::string& name);
std::string fail_on_name(FailOn f);  ///< "mismatch" | "error" | "nan"

/// Counters of one strategy's work.
struct StrategyStats {
  std::string name;
  int64_t runs = 0;  ///< times the strategy ran (passes)
  int64_t oracle_calls = 0;
  int64_t nodes_removed = 0;
  double seconds = 0;
};

/// What a reduction did (reduce_model; api::ReduceResult::report).
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

}  // namespace onnxdbg::reduce
