// Runs one model on several backends with the same inputs and compares every backend's outputs
// with the first backend's (the golden values), for one input sample or several (each backend
// loaded once, every sample compared on its own). The result is a plain struct per sample that
// the terminal table, the JSON report and the HTML view all render.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "comparator/precision.h"
#include "compare/compare.h"
#include "core/enum_names.h"
#include "model/model.h"

namespace onnxdbg {

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

enum class Verdict { kAgree, kDisagree, kError };
inline constexpr EnumNames<Verdict, 3> kVerdictNames{
    {{Verdict::kAgree, "agree"}, {Verdict::kDisagree, "disagree"}, {Verdict::kError, "error"}}};
std::string verdict_name(Verdict v);  ///< "agree" | "disagree" | "error"

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

struct CompareRunOptions {
  ToleranceSpec tolerance;
  ErrorStat error_stat = ErrorStat::kElemwise;
  bool validate = false;  ///< check every output for NaN/Inf
  /// Called with short status lines ("loading model on onnxruntime") for a progress display.
  std::function<void(const std::string&)> progress;
  /// Asked before every backend's load and run: true skips the rest (the caller's Ctrl-C; the
  /// caller discards the report). Empty: never.
  std::function<bool()> cancelled;
  /// Golden outputs loaded from a file (--load-outputs), one map per input sample (empty: none):
  /// when given, they come first as the pseudo-backend "loaded:file=<golden_source>" and every
  /// backend is compared with them, sample i with golden_outputs[i]. Every tensor in a map is
  /// compared (give graph outputs only).
  std::vector<TensorMap> golden_outputs;
  std::string golden_source;  ///< the file they came from, for the report
  /// Given each backend's session once it is loaded (with its index in the backends), returns
  /// the session to run the samples on: the same one, or one that runs in its place and gives
  /// the same outputs (api::run's layerwise golden run for the reference). Empty: the sessions
  /// as loaded.
  std::function<std::unique_ptr<Session>(size_t backend, std::unique_ptr<Session>)> wrap_session;
};

/// Creates each backend, loads `model` (already read: Backend::load(const LoadedModel&), so the
/// reference builds its session from the protobuf and the isolated backends read model.path)
/// and runs `inputs` on it; a backend that fails at any
/// stage is recorded with its error and the others go on. A backend with precision=fp16 loads
/// the model converted by write_fp16_model (in a temporary folder, removed afterwards), and the
/// report lists the float16 overflow points. Then compares each output of each
/// backend with options.golden_outputs when given, else with the first backend that ran
/// (compare_tensors), validates NaN/Inf when asked, and
/// sets the verdict: kDisagree when a comparison or validation fails, else kError when a backend
/// failed or fewer than one backend ran, else kAgree.
/// options.golden_outputs holds at most one map here.
CompareRunReport run_and_compare(const LoadedModel& model, const std::vector<BackendSpec>& backends,
                                 const TensorMap& inputs, const CompareRunOptions& options);

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

/// As run_and_compare for every sample of `samples` (at least one), with each backend created
/// and the model loaded into it once, then run on sample 0, 1, ... in turn (precision=fp16 converts
/// the model once; its overflow points are found per sample). A backend that fails to create or
/// load fails on every sample; one whose run fails is recorded for that sample only and loaded
/// again (its worker may have crashed) for the next. options.golden_outputs, when not empty, holds
/// one map per sample. Progress lines name the sample when there are several. Errors: none; a size
/// mismatch of golden_outputs is a broken invariant (asserted).
SamplesRunReport run_and_compare_samples(const LoadedModel& model,
                                         const std::vector<BackendSpec>& backends,
                                         const std::vector<TensorMap>& samples,
                                         const CompareRunOptions& options);

/// The verdict over several samples' reports (see SamplesRunReport); sets report.verdict,
/// verdict_line and failing from report.samples. Exposed so that a caller who changes one
/// sample's verdict (--strict-providers) can summarise again.
void summarize_samples(SamplesRunReport& report);

}  // namespace onnxdbg
