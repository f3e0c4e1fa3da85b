// What running one model on several backends with the same inputs gives: each backend's run
// (its outputs, timing, providers, or why it failed), every output compared with the golden
// values, and the verdict, per input sample and over all of them. The report api::run returns
// (RunResult::report) and the CLI, the JSON report and the HTML view render; src/comparator/
// computes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onnxdbg/backend_spec.h"
#include "onnxdbg/compare.h"
#include "onnxdbg/enum_names.h"
#include "onnxdbg/session_info.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// A float32 tensor of the main graph whose reference value exceeds float16's range.
struct Fp16Overflow {
  std::string tensor;
  std::string node;  ///< producing node's name ("" when unnamed)
  std::string op_type;
  size_t node_index = 0;  ///< position in the main graph
  double max_abs = 0;     ///< largest finite |value| in float32
};

/// What happened on one backend.
struct BackendRun {
  BackendSpec spec;
  std::string description;  ///< "ONNX Runtime 1.29.0 (CPU)"
  bool ok = false;
  std::string error;         ///< one sentence when !ok
  std::string failed_stage;  ///< "create", "load" or "run" when !ok
  /// The failure's code when !ok: kModelError when the backend found the model itself invalid
  /// (the reference: an undefined tensor, a cycle, shapes a node cannot take).
  ErrorCode error_code = ErrorCode::kOk;
  SessionInfo info;        ///< load_seconds, providers, warnings
  double run_seconds = 0;  ///< inference wall time, seconds
  /// Peak resident memory of the process that ran the model (SessionRunResult::peak_rss_bytes: the
  /// worker's for an isolated backend, onnxdbg's own for the reference), bytes; 0 when unknown.
  int64_t peak_rss_bytes = 0;
  /// With several samples: this run used the session loaded for an earlier sample (info and its
  /// load_seconds are that load's).
  bool session_reused = false;
  TensorMap outputs;
};

/// One output of one backend compared with the same output of the golden backend.
struct OutputComparison {
  std::string output;
  std::string backend;  ///< BackendSpec::to_string() of the compared backend
  std::string against;  ///< the golden backend
  Tolerance tol;
  TensorComparison result;
};

/// A NaN or Inf found by --validate.
struct ValidationFinding {
  std::string backend;
  std::string output;
  int64_t count = 0;
  int64_t numel = 0;
};

/// The outcome of a comparison: every output within tolerance (kAgree), some not (kDisagree),
/// or a backend failed and nothing disagrees (kError).
enum class Verdict { kAgree, kDisagree, kError };
inline constexpr EnumNames<Verdict, 3> kVerdictNames{
    {{Verdict::kAgree, "agree"}, {Verdict::kDisagree, "disagree"}, {Verdict::kError, "error"}}};
std::string verdict_name(Verdict v);  ///< "agree" | "disagree" | "error"

/// The comparison of one input sample on every backend (run_and_compare, src/comparator/).
struct CompareRunReport {
  std::string model;
  /// With a precision=fp16 backend: float32 tensors beyond float16's range (find_fp16_overflows),
  /// in node order; fp16_check_error says why they could not be computed, if so.
  std::vector<Fp16Overflow> fp16_overflows;
  std::string fp16_check_error;
  TensorMap inputs;
  std::vector<BackendRun> backends;
  std::vector<OutputComparison> comparisons;
  std::vector<ValidationFinding> validation;
  bool validated = false;
  ErrorStat error_stat = ErrorStat::kElemwise;
  Verdict verdict = Verdict::kError;
  std::string verdict_line;  ///< one sentence a person can act on
};

/// Several input samples, never merged: one report per sample, as run_and_compare would give for
/// that sample alone, plus the verdict over all of them.
struct SamplesRunReport {
  std::vector<CompareRunReport> samples;  ///< samples[i] is input sample i
  /// kDisagree when any sample disagrees, else kError when any has an error, else kAgree.
  Verdict verdict = Verdict::kError;
  /// "outputs differ on 2 of 3 samples (1, 2); sample 1: <its verdict line>"; with one sample,
  /// that sample's line.
  std::string verdict_line;
  std::vector<size_t> failing;  ///< samples whose verdict is not kAgree, ascending
};

}  // namespace onnxdbg
