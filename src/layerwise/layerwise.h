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
#include "compare/compare.h"
#include "core/run_limits.h"  // parse_memory_size, memory_size_string (--layerwise-memory)
#include "model/model.h"
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

/// One intermediate tensor of the main graph, as the reference produced it (or as loaded, with
/// LayerwiseOptions::golden).
struct LayerTensor {
  std::string name;
  /// Position of the producing node in the main graph in the order the reference runs it: its
  /// index in the file, unless the file lists nodes before the producers of their inputs; then
  /// its position in the topological order the reference computes (layerwise_detail::in_run_order).
  size_t node_index = 0;
  std::string node;  ///< the producing node's name ("" when unnamed)
  std::string op_type;
  DType dtype = DType::kUndefined;
  Shape shape;
  uint64_t bytes = 0;             ///< memory a copy of the golden value takes (as allocated), bytes
  int64_t golden_nan_or_inf = 0;  ///< NaN/Inf elements in the golden value
  double golden_max_abs = 0;      ///< largest finite |value| of the golden value (0 if none)
  /// The scale of a quantized tensor (model/quantization.h) when one value is known, else 0: its
  /// comparisons then count in quantization steps and dequantized units (mark_quantized).
  double quant_scale = 0;
};

/// One tensor of one backend compared with its golden value.
struct LayerComparison {
  size_t tensor = 0;      ///< index into LayerwiseReport::tensors
  std::string backend;    ///< BackendSpec::to_string()
  bool observed = false;  ///< false: the backend could not give this tensor (see note)
  std::string note;       ///< why not observed ("OpenCV fused or folded it away")
  Tolerance tol;
  TensorComparison result;  ///< total error: golden inputs were not used (valid when observed)
  bool isolated = false;    ///< the producing node was re-run alone (--isolate)
  std::optional<TensorComparison> own;  ///< error of the node alone on golden inputs
  std::string isolate_error;            ///< why isolation failed, when it did
  /// precision=fp16 backend: an input of the node is an intermediate tensor that overflowed on
  /// this backend (golden value beyond float16's range, outside tolerance here), so it reaches
  /// the node alone as +-inf too. Its own error is then inherited from the node where that
  /// tensor overflowed, not the node's own.
  bool input_beyond_fp16 = false;
  /// precision=fp16 backend: the backend's float32 value holds values float16 cannot represent
  /// (a bit among the 13 low mantissa bits that float16 lacks is set), so the backend computed
  /// this tensor in float32, not float16 (ONNX Runtime's CPU provider does so for ops without a
  /// float16 kernel, dropping the float16 round trips between them).
  bool computed_in_float32 = false;
  /// As computed_in_float32, for the node's output when it ran alone (own): the backend ran the
  /// isolated node in float32, so its own error shows no float16 rounding or overflow.
  bool own_computed_in_float32 = false;
  /// An input of the producing node is an intermediate tensor outside tolerance on this backend,
  /// or one with no golden value (a loaded file lacks it, so it was never compared; graph
  /// inputs, initializers and Constant outputs are the same everywhere): its error can be
  /// inherited.
  bool input_failed = false;
  bool pass() const { return !observed || result.pass; }
  /// Isolated, and the node's error is its own: outside tolerance alone on golden inputs that
  /// its precision can hold.
  bool own_failure() const { return own && !own->pass && !input_beyond_fp16; }
  /// Outside tolerance in the whole graph, within it alone on golden inputs, and no input of the
  /// node disagrees: the error is not inherited but comes from how the backend ran the node in
  /// context (fused with a neighbour, in another layout, or in float32 inside a float16 model).
  bool context_failure() const {
    return observed && !result.pass && own && own->pass && !input_failed;
  }
};

/// The node named as the origin of the divergence on one backend.
struct FirstDivergence {
  size_t tensor = 0;  ///< index into LayerwiseReport::tensors
  std::string backend;
  std::optional<double> own_error;  ///< max abs error of the node alone (with --isolate)
  /// "own": its own error exceeds the tolerance (isolation); "context": alone it agrees but no
  /// input disagrees (LayerComparison::context_failure); "total": without isolation, the first
  /// tensor outside tolerance.
  std::string basis;
  /// The precision the backend ran the node in: "fp32", or "fp16" for a precision=fp16 backend
  /// (its repro model is then the node alone converted to float16, as the backend ran it).
  std::string precision = "fp32";
};

/// What the layerwise pass did on one backend.
struct LayerwiseBackend {
  std::string backend;  ///< BackendSpec::to_string()
  bool ok = true;
  std::string error;  ///< why the backend could not be compared layerwise
  int batches = 0;
  int observed = 0, not_observed = 0, failed = 0;
  /// precision=fp16 backend: observed float tensors it computed in float32
  /// (LayerComparison::computed_in_float32).
  int computed_in_float32 = 0;
  std::vector<std::string> notes;  ///< e.g. "adding 120 outputs changed ONNX Runtime's graph"
  std::optional<FirstDivergence> first;
};

struct LayerwiseReport {
  std::vector<LayerTensor> tensors;  ///< in topological order (the node order of the main graph)
  /// "reference" when the reference interpreter gave the golden values, else
  /// LayerwiseOptions::golden_source (a file path, or "given").
  std::string golden_source = "reference";
  /// With loaded golden values: the main graph's node outputs (Constant nodes' excepted) that
  /// have none, so are not compared; in topological order.
  std::vector<std::string> no_golden;
  std::vector<LayerComparison> comparisons;
  std::vector<LayerwiseBackend> backends;
  /// The earliest first divergence over all backends (ties: the backend listed first).
  std::optional<FirstDivergence> first;
  uint64_t memory_budget = 0;
  /// How often the reference ran: once for every golden value (kept in the spill file); again
  /// beside each backend run and per chunk of isolation only for tensors the spill file could not
  /// take (max_spill_bytes; stops after the run's last tensor). With loaded golden values only
  /// the isolation runs that need values the loaded ones lack count.
  int reference_runs = 0;
  /// The output comparison's reference run was this pass's first reference run (api::run with
  /// one input sample and the reference's golden values): the reference ran reference_runs times
  /// in all, not once more.
  bool golden_run_shared = false;
  /// Bytes of golden values written to the spill file (0 with loaded golden values).
  uint64_t spilled_bytes = 0;
  /// Notes on the pass itself (the spill file full, so the reference ran again).
  std::vector<std::string> notes;
  double seconds = 0;  ///< wall time of the whole layerwise pass
  /// Peak resident memory of the onnxdbg process at the end of the pass (getrusage ru_maxrss;
  /// the worker processes not included), bytes: what the golden values, the backends' replies
  /// and the reference run held at most, on top of the loaded model.
  int64_t peak_rss_bytes = 0;
  /// The Ifs that ran as the branch they took on the inputs and the Loops unrolled into the
  /// iterations they ran (surgeon::inline_taken_branches): the pass compares the values computed
  /// inside them like any other, their nodes named by path ("outer/then_branch/Conv_3",
  /// "loop/body/Add_2 [iter 4]"); node indices count the nodes of that model.
  std::vector<surgeon::TakenBranch> taken_branches;
  /// Control-flow nodes compared as whole nodes, each with why ("Loop 'l' ran no iteration";
  /// when inlining failed, one note with the reason).
  std::vector<std::string> control_flow_notes;
  std::filesystem::path repro_dir;  ///< where save_layerwise_repro wrote, once it has
  /// Golden values the first divergent node reads and writes, when isolation already captured
  /// them (save_layerwise_repro then needs no extra reference run).
  TensorMap first_node_values;
};

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
