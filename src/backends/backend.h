// The backend interface: a named engine (reference, onnxruntime, opencv) that loads an ONNX model
// into a session and runs it on named inputs, returning named outputs with timing. Backends that
// wrap third-party code are reached through an isolated worker process (see isolated.h), so a
// segfault, abort or hang in them is an error result, never a crash of onnxdbg.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/providers.h"
#include "core/onnx.h"
#include "model/model.h"
#include "onnxdbg/backend_spec.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "onnxdbg/value.h"

namespace onnxdbg {

/// What one Session::run gives back (api::RunResult is a whole `onnxdbg run`).
struct SessionRunResult {
  TensorMap outputs;
  double run_seconds = 0;  ///< wall time of the inference call only, seconds
  /// Peak resident memory of the process that ran the model so far (getrusage ru_maxrss), bytes;
  /// for the isolated backends that is the worker process, for the in-process reference the
  /// whole onnxdbg process. 0 when unknown.
  int64_t peak_rss_bytes = 0;
  /// run_observing only: requested tensors the backend could not give, with the reason.
  std::map<std::string, std::string> not_observed;
  /// Seconds this run spent loading the model, for a session that loads it at its first run
  /// (OpenCV imports a model with symbolic input dims only once the inputs fix them); the
  /// runner adds them to the session's load time. nullopt when the run loaded nothing.
  std::optional<double> load_seconds;
};

/// The context line that marks a failure of a load a session put off to its first run (see
/// SessionRunResult::load_seconds): the runner reports it as a failed load with the backend's
/// reason, not a failed run.
inline constexpr const char* kDeferredLoadContext = "while loading the model at its first run";
/// `st` marked as the failure of a deferred load; `detail` completes the context line (" with
/// input shapes x=1x3").
Status deferred_load_failure(Status st, const std::string& detail);
/// Whether `st` (also after crossing the worker protocol) is a deferred load's failure.
bool is_deferred_load_failure(const Status& st);

/// Receives one output tensor of a streamed run (Session::run_each) as soon as it is available;
/// `value` is the caller's to keep or drop (dropping it at once keeps one output in memory).
using TensorSink = std::function<void(const std::string& name, Tensor&& value)>;

/// Result of one run with values of any kind.
struct ValueRunResult {
  ValueMap outputs;
  double run_seconds = 0;  ///< wall time of the inference call only, seconds
};

/// A model loaded into a backend, ready to run many times.
class Session {
 public:
  virtual ~Session() = default;
  virtual const SessionInfo& info() const = 0;
  /// Runs the model on `inputs` (all graph inputs that have no initializer). Returns every graph
  /// output. Errors: kInvalidArgument for bad inputs, kBackendError for a failing or crashing
  /// backend (the message quotes the backend's own error text).
  virtual Expected<SessionRunResult> run(const TensorMap& inputs) = 0;
  /// As run, for models whose inputs or outputs are sequences or optionals (ONNX IR "Types").
  /// The default serves backends that exchange tensors only: it runs run() when every input is a
  /// tensor and wraps the outputs; otherwise kUnsupported naming the first non-tensor input.
  /// Isolated sessions carry the values to the worker and back (worker_protocol.h), where the
  /// backend's own run_values runs (the reference's and ONNX Runtime's take every kind).
  virtual Expected<ValueRunResult> run_values(const ValueMap& inputs);
  /// Runs like run() and also returns the intermediate tensors named in `tensors` (main-graph
  /// value names) without changing the model, for backends that can read them from the engine
  /// (OpenCV: by layer name). Tensors it cannot observe (e.g. fused or folded away) are absent
  /// from `outputs` and listed in `not_observed`. Errors: as run(); kUnsupported by default.
  virtual Expected<SessionRunResult> run_observing(const TensorMap& inputs,
                                                   const std::vector<std::string>& tensors) {
    (void)inputs;
    (void)tensors;
    return unsupported("this backend cannot read intermediate tensors by name");
  }
  /// As run() (`observe` empty) or run_observing(), but every output tensor goes to `sink`, one
  /// at a time, instead of into SessionRunResult::outputs (left empty), so the caller never holds
  /// all of them at once. Isolated backends hand each tensor over as it is read from the worker's
  /// reply; the default runs run()/run_observing() and then hands over the outputs, the
  /// observed tensors first in the order of `observe`, then the graph outputs in the graph's order,
  /// freeing each after its call. Errors: as run() and run_observing(); a failed run
  /// calls `sink` for no tensor.
  virtual Expected<SessionRunResult> run_each(const TensorMap& inputs,
                                              const std::vector<std::string>& observe,
                                              const TensorSink& sink);
};

/// An engine that can load models.
class Backend {
 public:
  virtual ~Backend() = default;
  /// The registered name: "reference", "onnxruntime", "opencv".
  virtual std::string name() const = 0;
  /// The spec this backend was created from (name and options).
  virtual const BackendSpec& spec() const = 0;
  /// One line describing the engine and its version ("ONNX Runtime 1.29.0, CPU").
  virtual std::string describe() const = 0;
  /// What this backend knows in advance it cannot run in `model`: one entry per op, e.g.
  /// "LSTM at opset 14". Empty when it expects to run it or cannot tell before loading (the
  /// isolated third-party backends learn this only at load time).
  virtual std::vector<std::string> unsupported_ops(const onnx::ModelProto& model) const {
    (void)model;
    return {};
  }
  /// Loads the model at `model_path`. Its external data (ONNX IR "External Tensor Data")
  /// resolves in `external_data_dir`, or in the model file's folder when that is empty: a model
  /// onnxdbg writes into a temp folder (layerwise's, reduce's candidates) points back at the
  /// original's folder this way, so weights are neither copied nor linked. Errors: kBackendError
  /// with the backend's own message when it refuses the model; kUnsupported when onnxdbg knows in
  /// advance the backend cannot run it (e.g. the reference lacks a kernel).
  Expected<std::unique_ptr<Session>> load(const std::filesystem::path& model_path,
                                          const std::filesystem::path& external_data_dir = {}) {
    return do_load(model_path, external_data_dir);
  }
  /// Loads `model`, already read by the caller: its file (LoadedModel::path) for a backend that
  /// reads it in a process of its own, its external data in LoadedModel::base_dir. The in-process
  /// reference builds its session from the parsed protobuf, without reading the file again.
  /// Errors: as load().
  Expected<std::unique_ptr<Session>> load(const LoadedModel& model) { return do_load_model(model); }

 protected:
  /// load(const LoadedModel&) of each backend: by default load(model.path, model.base_dir).
  virtual Expected<std::unique_ptr<Session>> do_load_model(const LoadedModel& model) {
    return do_load(model.path, model.base_dir);
  }
  /// load() of each backend; `external_data_dir` as there.
  virtual Expected<std::unique_ptr<Session>> do_load(
      const std::filesystem::path& model_path, const std::filesystem::path& external_data_dir) = 0;
};

/// Peak resident memory of this process so far (getrusage(RUSAGE_SELF).ru_maxrss), bytes.
int64_t peak_rss_bytes();

/// Each backend's documentation, defined in src/backends/<name>/<name>_doc.cpp.
#define ONNXDBG_IN_PROCESS_BACKEND(name, factory) BackendDoc name##_backend_doc();
#define ONNXDBG_ISOLATED_BACKEND(name, factory) BackendDoc name##_backend_doc();
#include "backends/backends.def"
#undef ONNXDBG_IN_PROCESS_BACKEND
#undef ONNXDBG_ISOLATED_BACKEND
/// Whether backends.def lists `name` as a backend that runs in the worker process.
bool is_isolated_backend(const std::string& name);

/// Creates a backend from its spec: `reference` runs in this process; `onnxruntime` and `opencv`
/// run in an onnxdbg-worker process. Unknown options are refused here, before any model is loaded.
/// Errors: kInvalidArgument for an unknown name or option (the message lists the valid ones).
Expected<std::unique_ptr<Backend>> create_backend(const BackendSpec& spec);

}  // namespace onnxdbg
