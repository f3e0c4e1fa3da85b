// onnxdbg::api::reduce: shrink a failing model to a minimal failing one (`onnxdbg reduce`): the
// oracle says whether a candidate still fails; it is an external check command (Polygraphy's
// `debug reduce --check`), a built-in oracle that runs candidates on backends (mismatch, error,
// NaN), or a C++ callable. The best model so far is written to the output after every success.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "onnxdbg/backend_spec.h"
#include "onnxdbg/common.h"
#include "onnxdbg/compare.h"
#include "onnxdbg/input_gen.h"
#include "onnxdbg/model.h"
#include "onnxdbg/options.h"
#include "onnxdbg/reduce_options.h"
#include "onnxdbg/tensor.h"
#include "onnxdbg/viewer_overlays.h"

namespace onnxdbg::api {

/// One candidate model as a caller's oracle sees it; valid during the call only.
struct OracleCandidate {
  /// The model, serialized (onnx.ModelProto bytes, deterministic: equal candidates, equal bytes).
  std::string_view bytes;
  /// Where its external data resolves (the original's folder: candidates keep its references).
  std::filesystem::path base_dir;
  std::vector<std::string> inputs;   ///< its graph inputs a caller feeds
  std::vector<std::string> outputs;  ///< its graph outputs
  /// Per input sample, the golden value of every graph input (what the tensor it stands for held
  /// inside the original model); empty when there are no golden values.
  const std::vector<TensorMap>* feeds = nullptr;
  /// The candidate itself, for onnxdbg's own modules and tests (src/reduce/candidate.h).
  const reduce::BuiltCandidate* built = nullptr;
};

/// A caller's oracle: whether `candidate` still shows the failure (true) or not (false). An
/// error stops the reduction (the best model so far is kept).
using OracleFn = std::function<Expected<bool>(const OracleCandidate& candidate)>;

/// The built-in oracle (`--fail-on`): candidates run on `backends` in onnxdbg's control.
struct BuiltinOracleOptions {
  std::set<reduce::FailOn> fail_on;  ///< mismatch, error, nan; at least one
  /// The first gives the golden values for kMismatch; default reference,onnxruntime.
  std::vector<BackendSpec> backends;
  ToleranceSpec tolerance;
  ErrorStat error_stat = ErrorStat::kElemwise;
  std::vector<std::string> fail_regex;  ///< kError: the error text must match one of these
};

struct ReduceOptions {
  std::filesystem::path model;
  std::filesystem::path output;  ///< where the reduced model is written (after every success)
  /// The oracle: exactly one of a check command (check.command not empty), the built-in oracle
  /// (builtin.fail_on not empty) or `oracle`.
  reduce::CheckOptions check;  ///< work_dir and jobs are set by reduce()
  BuiltinOracleOptions builtin;
  OracleFn oracle;
  std::string oracle_description = "callable";  ///< `oracle`'s line in the summary
  int jobs =
      option_defaults::jobs;  ///< candidates tested at once (check commands, built-in oracle runs)
  /// Where --check commands run: "local" (children of this process) or "ray" (each a Ray task on
  /// the cluster at `address`, "" $RAY_ADDRESS; the candidate goes with it; `jobs` tasks at once,
  /// 0 or 1 meaning the cluster's CPUs). The journal, cache and result are a local run's.
  std::string executor{option_defaults::executor};
  std::string address;
  std::string python;  ///< the Python that runs the Ray executor ("": $ONNXDBG_PYTHON, python3)
  /// Seconds a backend run of the built-in oracle may take (--timeout; timeout= on every backend
  /// of builtin.backends that sets none; a run past it is an error, "timed out after N s"), and
  /// the golden values' reference runs on the original (all samples together). 0: the backends'
  /// own (reference: none). --check commands have check.timeout_seconds instead.
  double timeout_seconds = 0;
  /// Bytes one tensor may take (--max-memory): generated inputs, initializers and node outputs of
  /// the reference runs (max_memory= on the built-in oracle's reference backends). 0: 80% of the
  /// memory available (core/run_limits.h).
  uint64_t max_memory = 0;
  /// Iterations one Loop or Scan node may run in the reference runs (--max-iterations;
  /// max_iterations= on the built-in oracle's reference backends). 0: no bound.
  uint64_t max_iterations = 0;

  /// Input samples: values from a file (.npz may also hold intermediate tensors, used as golden
  /// values; .pb, .npy, a test-data folder), else `iterations` generated samples (seeds seed,
  /// seed + 1, ...; a candidate fails if any sample does).
  std::filesystem::path load_inputs;
  InputGenOptions generate;
  int iterations = option_defaults::iterations;
  /// Dynamic input dimensions fixed before reducing (--model-input-shapes).
  std::map<std::string, Shape> model_input_shapes;

  std::string mode{
      option_defaults::mode};           ///< bisect, linear or full (reduce::strategies_for_mode)
  std::vector<std::string> strategies;  ///< instead of mode's, when not empty
  std::filesystem::path artifacts;      ///< keep every candidate in DIR/good and DIR/bad
  std::filesystem::path min_good;       ///< write the passing candidate closest to the result
  std::filesystem::path journal;        ///< default: OUTPUT.journal
  bool resume = false;                  ///< replay the journal's verdicts
  bool fallback_shapes = false;         ///< --force-fallback-shape-inference
  bool keep_inputs = false;             ///< --no-reduce-inputs
  bool keep_outputs = false;            ///< --no-reduce-outputs
  /// --any-failure: accept a candidate that fails in any way. By default the built-in oracle's
  /// verdicts carry a signature (backend, load or run, and the error message with numbers and
  /// names masked; or the backends that disagree, in values or in shape, and the original's
  /// first divergent op type from one layerwise comparison) and a candidate that
  /// fails with another signature than the original counts as a pass, with a note. A check
  /// command or a caller's function gives no signature: any failure counts there.
  bool any_failure = false;
};

struct ReduceResult {
  std::filesystem::path source;  ///< ReduceOptions::model
  /// The model reduced (after model_input_shapes; its path is ReduceOptions::model, its external
  /// data in the original's folder); when a failure inside an If or Loop was reduced past it,
  /// the model with that node replaced.
  Model original;
  int64_t nodes = 0;   ///< nodes of the original's main graph
  std::string oracle;  ///< the oracle's one-line description
  /// The reduction's report, when it ran to its end.
  std::optional<reduce::ReduceReport> report;
  /// Why the reduction stopped before its end (an oracle error, cancelled, an unwritable
  /// output); the best model so far is in `output` when `best_so_far`.
  Status stopped;
  bool best_so_far = false;
  Messages messages;
};

/// Reduces options.model as described above. Errors (returned before any candidate is tested):
/// kInvalidArgument for no oracle or several, jobs or iterations below 1, an unknown mode or
/// strategy, a built-in oracle on a model the reference cannot run (it needs golden values),
/// input values that cannot be generated for a built-in oracle; those of load_model, the input
/// readers and the oracle makers. A reduction that stops midway is a result with `stopped` set;
/// ctx.cancel stops it before the next oracle call (ErrorCode::kCancelled).
Expected<ReduceResult> reduce(const ReduceOptions& options, const CallContext& ctx = {});

/// A reduction strategy, for --strategies and ReduceOptions::strategies.
struct StrategyInfo {
  std::string name;
  std::string help;  ///< one line (`onnxdbg reduce --help`)
};
/// Every strategy, in src/reduce/strategies/strategies.def's order.
std::vector<StrategyInfo> reduce_strategies();

/// The JSON object `onnxdbg reduce --json` prints (reduce::report_json).
nlohmann::json to_json(const ReduceResult& result);

/// What `onnxdbg reduce` prints after its first line: whether the original fails, the kept
/// nodes, inputs and outputs, oracle calls, the strategy table, notes and the files written.
void print_text(const ReduceResult& result, std::ostream& os);

/// The viewer's overlay: the reduced model's nodes highlighted in the original.
report::ViewerOverlays reduce_overlays(const ReduceResult& result);

}  // namespace onnxdbg::api
