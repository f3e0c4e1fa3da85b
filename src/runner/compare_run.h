// Runs one model on several backends with the same inputs and compares every backend's outputs
// with the first backend's (the golden values). The result is a plain struct that the terminal
// table, the JSON report and later the HTML view all render.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "compare/compare.h"
#include "runner/precision.h"

namespace onnxdbg {

/// What happened on one backend.
struct BackendRun {
  BackendSpec spec;
  std::string description;  ///< "ONNX Runtime 1.29.0 (CPU)"
  bool ok = false;
  std::string error;        ///< one sentence when !ok
  std::string failed_stage; ///< "create", "load" or "run" when !ok
  SessionInfo info;         ///< load_seconds, providers, warnings
  double run_seconds = 0;   ///< inference wall time, seconds
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
  /// Golden outputs loaded from a file (--load-outputs): when set, they come first as the
  /// pseudo-backend "loaded:file=<golden_source>" and every backend is compared with them.
  /// Every tensor in it is compared (give graph outputs only).
  std::optional<TensorMap> golden_outputs;
  std::string golden_source;  ///< the file they came from, for the report
};

/// Creates each backend, loads `model_path` and runs `inputs` on it; a backend that fails at any
/// stage is recorded with its error and the others go on. A backend with precision=fp16 loads
/// the model converted by write_fp16_model (in a temporary folder, removed afterwards), and the
/// report lists the float16 overflow points. Then compares each output of each
/// backend with options.golden_outputs when given, else with the first backend that ran
/// (compare_tensors), validates NaN/Inf when asked, and
/// sets the verdict: kDisagree when a comparison or validation fails, else kError when a backend
/// failed or fewer than one backend ran, else kAgree.
CompareRunReport run_and_compare(const std::filesystem::path& model_path,
                                 const std::vector<BackendSpec>& backends, const TensorMap& inputs,
                                 const CompareRunOptions& options);

}  // namespace onnxdbg
