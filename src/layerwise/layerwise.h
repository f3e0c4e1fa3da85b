// Layerwise localization: where in the graph do two backends start to disagree? The reference
// interpreter gives golden values for every intermediate tensor of the main graph (through its
// per-node hook); each other backend is asked for the same tensors (ONNX Runtime: as extra graph
// outputs, in batches under a memory budget; OpenCV: by layer name) and every tensor is compared.
// With isolation, each divergent node is re-run alone on the backend with golden inputs, so its
// own error is told apart from the error it inherited from upstream.
// This header is the layerwise module's front door; the files beside it (namespace
// onnxdbg::layerwise_detail) are private to the module.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/run_limits.h"  // parse_memory_size, memory_size_string (--layerwise-memory)
#include "model/model.h"
#include "onnxdbg/compare.h"
#include "onnxdbg/layerwise_report.h"
#include "onnxdbg/options.h"
#include "onnxdbg/status.h"
#include "reference/interpreter.h"
#include "surgeon/taken_branches.h"

namespace onnxdbg {

/// Default LayerwiseOptions::max_extra_outputs. Each ONNX Runtime run with extra outputs costs a
/// whole inference, and the outputs are kept out of ORT's memory planning and fusions. Measured
/// when onnxdbg still held a batch's golden values and ORT's replies at once, 330 outputs per run
/// cost 8.3 s CPU against 3.2 s for 150 (PP-OCRv4 det 640x640, 2GiB). Since the golden values
/// stream beside each run (GoldenStream), the cap matters little there: median of three, `run
/// --layerwise --isolate`, wall / CPU seconds: 768MiB: 150 per run 2.37-2.74 / 3.2-3.5, 330
/// 2.3-2.5 / 2.9-3.1; 2GiB: 150 2.16-2.18 / 3.0-3.05, 330 2.05-2.5 / 2.6-2.9; 60 per run costs
/// 0.3-1.2 s more. Kept at 150, which bounds how far one run strays from ORT's plain graph.
inline constexpr size_t kLayerwiseMaxExtraOutputs = 150;

/// LayerwiseOptions::max_spill_bytes: as much as the temp folder's disk has free, less
/// layerwise_detail::kSpillDiskReserve (1 GiB).
inline constexpr uint64_t kSpillFreeDisk = UINT64_MAX;

struct LayerwiseOptions {
  ToleranceSpec tolerance;  ///< per tensor name: --atol NAME:V applies to intermediate tensors too
  ErrorStat error_stat = ErrorStat::kElemwise;
  /// Bytes of intermediate tensors held at once (--layerwise-memory). A batch of tensors, which
  /// the backend holds as the outputs of one run, is at most memory_budget / kLayerwiseCopies
  /// bytes; onnxdbg itself maps at most the batch's golden values from the spill file at once
  /// (at most the same share) and holds the one backend tensor being compared. Not counted: the
  /// reference interpreter's working set during its one run (the tensors one inference holds
  /// live), the loaded model and ONNX Runtime's own memory in its worker process
  /// (LayerwiseReport::peak_rss_bytes is the measured peak).
  uint64_t memory_budget = option_defaults::layerwise_memory;
  /// Bytes of golden values the spill file (in temp_dir) may take: the reference's value of every
  /// compared tensor is written there during its one run and read back, memory-mapped, for each
  /// batch and the isolation. Tensors past the limit are computed again by a reference run beside
  /// each backend run that needs them (LayerwiseReport::notes says so). kSpillFreeDisk: the free
  /// space of the folder's disk less 1 GiB, asked before the run.
  uint64_t max_spill_bytes = kSpillFreeDisk;
  /// At most this many extra graph outputs per ONNX Runtime run; a memory batch with more
  /// tensors is asked for in several runs of the model. See kLayerwiseMaxExtraOutputs.
  size_t max_extra_outputs = kLayerwiseMaxExtraOutputs;
  bool isolate = false;  ///< re-run each divergent node alone (--isolate)
  /// Folder for the temporary models (created and removed); default: the system temp folder.
  std::filesystem::path temp_dir;
  /// How the golden reference run goes (`run --reference-accumulate double`, or the options of
  /// the first reference backend of --backends).
  reference::InterpreterOptions reference;
  /// Loaded golden values by tensor name (graph outputs and intermediates, e.g. dumped by
  /// PyTorch or TensorFlow; not owned, must outlive the call). When set they are the golden
  /// values: every backend given (the reference too) is compared with them, tensor by tensor;
  /// node outputs without a loaded value are not compared (LayerwiseReport::no_golden). The
  /// reference only fills in values a node's isolation (or repro) reads that the map lacks.
  const TensorMap* golden = nullptr;
  /// Where `golden` came from, for messages and the report: a file path, or "given" (values a
  /// caller passed directly, e.g. from Python).
  std::string golden_source;
  /// Short status lines ("layerwise: onnxruntime batch 2/3") for a progress display.
  std::function<void(const std::string&)> progress;
  /// Asked before every batch: true stops the pass with an ErrorCode::kCancelled error (the
  /// caller's Ctrl-C). Empty: never.
  std::function<bool()> cancelled;
};

/// The budget's share per batch: the backend's outputs of one run (a batch), and room for the
/// golden values and the tensor being compared on onnxdbg's side.
inline constexpr uint64_t kLayerwiseCopies = 2;

/// How messages name the golden values of a pass: "reference", "'golden.npz'" (a file) or "the
/// given golden values" (LayerwiseOptions::golden_source "given").
std::string golden_label(const std::string& golden_source);

/// Runs the layerwise comparison of `model` on `backends` (not including the reference, which
/// gives the golden values, unless options.golden does) with `inputs` (every graph input without
/// an initializer). Tensors of the main graph's nodes are compared, except outputs of Constant
/// nodes. A model with If or Loop nodes is compared as it ran on `inputs`: each If replaced by the
/// branch it took and each Loop unrolled into the iterations it ran
/// (surgeon::inline_taken_branches, LayerwiseReport::taken_branches), so the values computed
/// inside them are compared too and a node there can be the first divergent one; values inside
/// Scan bodies are not compared. A first reference run sizes the tensors
/// and keeps their golden values in a spill file in options.temp_dir (memory-mapped; see
/// options.max_spill_bytes) (with options.golden: the loaded values do, and those are handed out
/// in place of the reference's below; tensors without one are listed in
/// LayerwiseReport::no_golden). Each backend then gets them in topological order, in batches of at
/// most memory_budget / kLayerwiseCopies bytes, each compared with its golden value as the
/// backend's value arrives. Tensors the spill file could not take are computed by the reference
/// again beside each backend run on this thread, up to the batch's last tensor, and compared as
/// both arrive in the same order (the backend's side reads them on a second thread), so neither
/// side's batch is held by onnxdbg.
/// A backend that cannot load or run a batch is recorded (LayerwiseBackend::error) and the others
/// go on. A backend with precision=fp16 (comparator/precision.h) loads every model it gets (the
/// whole model, each batch's model, the isolated nodes) converted by surgeon::to_fp16 with graph
/// inputs and outputs kept float32, so its intermediate tensors come back as float16 values
/// widened to float32 and compare with the float32 golden values as they are.
/// With options.isolate, every node with a failing output is re-run alone on its backend
/// (all such nodes of a chunk in one model of disjoint single-node graphs, node by node when
/// that model fails) on golden inputs from the spill file (one more reference run per
/// memory_budget / kLayerwiseCopies of them for those it lacks), and the first divergence is the
/// first node in topological order whose own error exceeds the tolerance. Errors: kInvalidArgument
/// when the budget cannot hold one tensor (the message names the tensor and the budget it needs),
/// or when a loaded golden value's dtype, or a dimension shape inference knows, differs from the
/// model's (the message names the tensor, both types or shapes); the reference's own errors
/// (kUnsupported, kModelError, kInvalidArgument for bad inputs) with their context.
Expected<LayerwiseReport> run_layerwise(const LoadedModel& model,
                                        const std::vector<BackendSpec>& backends,
                                        const TensorMap& inputs, const LayerwiseOptions& options);

/// A layerwise pass of run_layerwise taken in two steps, so that its reference run also serves
/// as a plain run of the reference (api::run's comparison of the outputs takes the graph outputs
/// from it: with --layerwise the reference runs once). prepare_layerwise makes the pass's first
/// reference run (every golden value sized and kept in the spill file); run_layerwise(prepared,
/// ...) does the rest. The spill file and the pass's temporary folder go with the object.
class PreparedLayerwise {
 public:
  ~PreparedLayerwise();
  PreparedLayerwise(const PreparedLayerwise&) = delete;
  PreparedLayerwise& operator=(const PreparedLayerwise&) = delete;
  /// The reference's values of the main graph's outputs on the pass's inputs, owned copies: from
  /// the spill file, the reference running again only for those it could not take (a full
  /// disk). Bit for bit a plain reference run's with the same InterpreterOptions (the
  /// interpreter's results do not depend on which values are kept, nor on the thread count).
  /// Errors: the reference's.
  Expected<TensorMap> graph_outputs();
  /// Wall time of the reference run (with the spill file's writes), seconds.
  double seconds() const;

 private:
  struct Impl;
  explicit PreparedLayerwise(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend Expected<std::unique_ptr<PreparedLayerwise>> prepare_layerwise(const LoadedModel&,
                                                                        const TensorMap&,
                                                                        const LayerwiseOptions&);
  friend Expected<LayerwiseReport> run_layerwise(PreparedLayerwise&,
                                                 const std::vector<BackendSpec>&);
};

/// The first step of run_layerwise(model, backends, inputs, options): the taken branches, the
/// golden values (a reference run, or the loaded ones sized). `model`, `inputs` and
/// options.golden must outlive the result. Errors: as run_layerwise's for that step.
Expected<std::unique_ptr<PreparedLayerwise>> prepare_layerwise(const LoadedModel& model,
                                                               const TensorMap& inputs,
                                                               const LayerwiseOptions& options);

/// The rest of the pass `prepared` began, on `backends` (as run_layerwise's); once per prepared
/// pass (a second call is kInvalidArgument). Errors: as run_layerwise.
Expected<LayerwiseReport> run_layerwise(PreparedLayerwise& prepared,
                                        const std::vector<BackendSpec>& backends);

/// A model holding only main-graph node `node_index` of `model`: its inputs that are
/// initializers (or outputs of Constant nodes, given in `constants`) become initializers, the
/// others graph inputs; outputs keep their names, typed from `output_types`. External-data
/// initializers are read into the model (resolved against model.base_dir).
/// Errors: kInvalidArgument for an index out of range; kUnsupported for a node with subgraph
/// attributes that read outer-scope values; kModelError for unreadable initializers.
Expected<onnx::ModelProto> single_node_model(const LoadedModel& model, size_t node_index,
                                             const TensorMap& constants,
                                             const std::map<std::string, Tensor>& output_types);

/// Writes the bug-report folder for the first divergence of `report`: DIR/model.onnx (the node
/// alone, see single_node_model) and DIR/test_data_set_0/{input,output}_K.pb (golden inputs and
/// golden outputs), written to a sibling temp folder and renamed, so nothing is half-written.
/// Re-runs the reference on `inputs` to capture the node's golden inputs unless
/// report.first_node_values holds them; with `loaded` (the pass's LayerwiseOptions::golden) its
/// values come first and the reference only fills in what it lacks. When the first divergence's
/// precision is "fp16" the node is written converted to float16 (inputs and outputs float32 with
/// Casts inside), as the backend was given it. An existing DIR is replaced only when it looks like
/// an earlier repro (holds model.onnx and test_data_set_0). `options`: how that reference run goes
/// (as LayerwiseOptions::reference). Errors: kInvalidArgument (no first divergence, an unwritable
/// or foreign DIR), reference errors.
Status save_layerwise_repro(const LoadedModel& model, const TensorMap& inputs,
                            LayerwiseReport& report, const std::filesystem::path& dir,
                            const reference::InterpreterOptions& options = {},
                            const TensorMap* loaded = nullptr);

}  // namespace onnxdbg
