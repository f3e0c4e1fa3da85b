// What the layerwise pass found: every intermediate tensor of the main graph compared with its
// golden value on each backend (total error, and with isolation the node's own error on golden
// inputs), and the first divergent node. The report api::run returns per sample
// (RunResult::layers); src/layerwise/ computes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "onnxdbg/compare.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

namespace surgeon {

/// One If replaced by the branch it took, or one Loop or Scan unrolled (inline_taken_branches).
struct TakenBranch {
  /// The node's name as the main graph held it when it was replaced: its own name, or for a node
  /// inside a body inlined before it, "<outer If>/<branch>/<name>" (inline_if_branch); unnamed:
  /// "If#<index>", "Loop#<index>".
  std::string node;
  std::string op_type = "If";
  bool then_branch = true;  ///< If: the condition was true
  int64_t iterations = 0;   ///< Loop, Scan: the iterations unrolled
  int depth = 0;            ///< 0: a node of the main graph; 1: inside one inlined body; ...
};

}  // namespace surgeon

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

/// The layerwise pass of one input sample on every compared backend (run_layerwise).
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

}  // namespace onnxdbg
