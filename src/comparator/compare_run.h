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
#include "model/model.h"
#include "onnxdbg/compare.h"
#include "onnxdbg/enum_names.h"
#include "onnxdbg/run_report.h"

namespace onnxdbg {

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
