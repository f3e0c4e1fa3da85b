// Oracles: is this candidate still failing? An external check command (Polygraphy's --check,
// --fail-code, --fail-regex, plus a timeout) or a built-in oracle that runs the candidate on
// backends in this process's control (mismatch, error, NaN), reusing the golden values.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "batch/executor.h"
#include "onnxdbg/compare.h"
#include "onnxdbg/enum_names.h"
#include "onnxdbg/reduce_options.h"
#include "reduce/candidate.h"

namespace onnxdbg::reduce {

/// What an oracle said about one candidate.
struct OracleVerdict {
  bool fails = false;      ///< the candidate still shows the failure ("bad" in Polygraphy's terms)
  std::string detail;      ///< one line: "exit code 1", "output y: 3 of 10 elements differ ..."
  bool timed_out = false;  ///< the check ran past its timeout (fails as --timeout-means says)
  /// How the candidate fails, so that a failure of another kind can be told from the original's:
  /// "error|<backend>|load|<message>", "error|<backend>|run|<message>", "mismatch|<backend> vs
  /// <golden backend>|values" (or "|shape", then "|first divergent <op type>" once the oracle is
  /// anchored, see Oracle::anchor), "nan|<backend>". The reducer masks numbers and the
  /// model's names in it before comparing. Empty when the oracle does not tell failures apart (a
  /// --check command, a caller's function): any failure then counts.
  std::string signature;
  /// Set by the reducer: the candidate failed, but not as the original did (another signature),
  /// so the verdict was turned into a pass (`fails` false; see ReducerOptions::any_failure).
  bool failed_differently = false;
};

class Oracle {
 public:
  virtual ~Oracle() = default;
  /// One line for the summary ("check `python3 check.py`", "mismatch reference vs opencv").
  virtual std::string describe() const = 0;
  /// How many candidates test() may be given at once, on different slots.
  virtual int max_parallel() const { return 1; }
  /// Whether candidates must come with input values (built-in oracles run them; a check command
  /// may not need any). Candidates whose inputs have no golden values are invalid then.
  virtual bool needs_values() const { return true; }
  /// Tests one candidate; `slot` in [0, max_parallel()) tells concurrent calls apart (each slot
  /// has its own files). Errors: only when the oracle itself cannot work (the check command does
  /// not exist, a backend cannot be created); a failing candidate is a verdict, not an error.
  virtual Expected<OracleVerdict> test(const BuiltCandidate& candidate, int slot) = 0;
  /// Called once by the reducer with the original model and its failing verdict, before any
  /// candidate: an oracle may localize the failure and add to `verdict.signature`, then sign later
  /// verdicts the same way (the built-in mismatch oracle finds the first divergent node's op type
  /// with a layerwise comparison, and signs a candidate's disagreement with that op type when a
  /// node of it feeds the disagreeing output). Default: nothing.
  virtual void anchor(const BuiltCandidate& original, OracleVerdict& verdict) {
    (void)original;
    (void)verdict;
  }
};

/// Makes the --check oracle. With jobs == 1 the candidate is written to iter_artifact exactly
/// (relative to the current folder, as Polygraphy does) and the command runs in the current
/// folder; with more jobs each runs on its own copy. The command also sees the path in the
/// environment variable ONNXDBG_ITER_ARTIFACT. As in Polygraphy's `debug reduce`, a candidate
/// fails when the exit code is non-zero (or equals fail_code) and, if fail_regex is given, one
/// regex matches stdout or stderr; with ignore_fail_code the regexes decide alone.
/// Errors: kInvalidArgument for an empty command, a bad regex, or ignore_fail_code without
/// fail_regex.
Expected<std::unique_ptr<Oracle>> make_check_oracle(const CheckOptions& options);

/// Compiles --fail-regex values (ECMAScript). Errors: kInvalidArgument naming the bad regex.
Expected<std::vector<std::regex>> compile_fail_regexes(const std::vector<std::string>& regexes);

struct BuiltinOptions {
  std::set<FailOn> fail_on;
  /// The first is the golden backend for kMismatch; the reference's outputs of a candidate that
  /// preserves values are the golden values themselves (no run).
  std::vector<BackendSpec> backends;
  ToleranceSpec tolerance;
  ErrorStat error_stat = ErrorStat::kElemwise;
  std::vector<std::string> fail_regex;  ///< kError: the error text must match one of these
  std::filesystem::path work_dir;       ///< where candidates are written for isolated backends
  /// -j: candidates tested at once, each on its own thread with its own sessions (and its own
  /// candidate file in work_dir, so isolated backends' workers run side by side).
  int jobs = 1;
};

/// Makes a built-in oracle. Backends are created once; isolated ones (onnxruntime, opencv) load
/// each candidate from a file in work_dir in their worker process, so a crash on a candidate is
/// a kError verdict, not a crash of onnxdbg. Candidates without input values (no golden values)
/// are refused as invalid by the reducer before they reach it.
/// Errors: kInvalidArgument (no fail_on, no backends, kMismatch with one backend, a bad regex),
/// those of create_backend.
Expected<std::unique_ptr<Oracle>> make_builtin_oracle(const BuiltinOptions& options);

}  // namespace onnxdbg::reduce
