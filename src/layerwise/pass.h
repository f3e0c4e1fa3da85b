// Private to the layerwise module: Pass, one layerwise pass (run_layerwise in layerwise.h). Its
// steps live in one file per concern: pass.cpp (the pass step by step, the first divergences),
// batch_run.cpp (one batch on one backend, compared as it arrives), segment.cpp (a batch as a
// segment of the graph), float16.cpp (precision=fp16 backends) and isolate.cpp (divergent nodes
// re-run alone on golden inputs).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"
#include "core/temp_dir.h"
#include "layerwise/batching.h"
#include "layerwise/golden_store.h"
#include "layerwise/golden_stream.h"
#include "layerwise/layerwise.h"
#include "model/model.h"
#include "onnxdbg/status.h"

namespace onnxdbg::layerwise_detail {

class GoldenStream;

using Clock = std::chrono::steady_clock;

/// Whether the backend reads intermediate tensors by layer name (BackendTraits; OpenCV DNN);
/// others get them as extra graph outputs.
inline bool observes_by_name(const BackendSpec& spec) {
  return backend_traits(spec.name).observes_by_layer_name;
}

/// Compares a backend's value of a tensor with its golden value; OpenCV's own dims (it drops or
/// merges some) are put back to the golden shape when the element count agrees.
TensorComparison compare_layer(const Tensor& actual, const Tensor& golden, const Tolerance& tol,
                               ErrorStat stat);

/// The backends of a pass, once created (index: the backend's position in the specs).
struct OpenBackends {
  std::vector<std::unique_ptr<Backend>> backends;  ///< null where the backend failed
  /// The whole model loaded, on backends that read tensors by name (observes_by_name).
  std::vector<std::unique_ptr<Session>> observing;
  /// Nodes of ONNX Runtime's optimized graph of the unmodified model; -1: not known.
  std::vector<int64_t> plain_nodes;
};

/// A backend's own values of the tensors later segments read (Pass::segment_model): kept in a
/// spill file of their own as its runs return them.
struct CarriedValues {
  std::unique_ptr<GoldenStore> store;  ///< null: the backend runs the whole model per batch
  std::set<std::string> needed;        ///< the tensors some segment reads from an earlier one
  int segments = 0;                    ///< batches run as segments
  std::string fallback;                ///< why segments stopped, when they did
};

/// One layerwise pass of `model` on `inputs`, filling `rep` (see run_layerwise).
class Pass {
 public:
  /// `copy`: `model` is not the file but as_run's copy of it (Ifs inlined, nodes sorted), so the
  /// backends load it saved beside the pass's temporary models, not the file.
  Pass(const LoadedModel& model, const TensorMap& inputs, const LayerwiseOptions& options,
       LayerwiseReport& rep, bool copy = false)
      : model_(model), inputs_(inputs), opt_(options), rep_(rep), copy_(copy) {}

  ~Pass();

  /// The pass is collect(), then compare(specs) on `specs` (the reference excluded, unless the
  /// golden values are loaded); PreparedLayerwise holds it between the two.
  /// The first step: the reference run that sizes every tensor and keeps its golden value in the
  /// spill file (or the loaded golden values sized). Errors: as run_layerwise.
  Status collect();
  /// The rest, after collect(): every backend's batches compared, isolation, the report's
  /// figures. Errors: as run_layerwise.
  Status compare(const std::vector<BackendSpec>& specs);
  /// After collect(): copies of the golden values of `names` (from the spill file; the reference
  /// runs again only for those it lacks). Errors: the reference's.
  Expected<TensorMap> golden_copies(const std::set<std::string>& names);
  /// Wall time of collect(), seconds.
  double collect_seconds() const { return collect_seconds_; }

 private:
  // --- pass.cpp: the pass, step by step -------------------------------------------------------
  void progress(const std::string& s) const;
  /// The store for the reference run's golden values (null with loaded golden values, or when
  /// the spill file cannot be created: each batch then runs the reference again, as noted).
  std::unique_ptr<GoldenStore> open_store();
  /// A spill file in the pass's temp folder, limited by the free space there less
  /// kSpillDiskReserve: the golden values' (`golden`; LayerwiseOptions::max_spill_bytes, when
  /// set, is their limit instead) or a segmented backend's carried values'. Errors:
  /// GoldenStore::create's.
  Expected<std::unique_ptr<GoldenStore>> new_spill_file(bool golden) const;
  /// Records that backend `k` failed: it is compared no further.
  void fail(size_t k, const Status& st);
  /// The specs the backends are created with (ours: precision=fp16 removed, ORT's arena off).
  static std::vector<BackendSpec> backend_run_specs(const std::vector<BackendSpec>& specs);
  /// ONNX Runtime's optimized node count of each backend's whole model, loaded in workers of
  /// their own while the first reference run goes on.
  std::vector<std::future<int64_t>> start_plain_node_counts(
      const std::vector<BackendSpec>& specs, const std::vector<BackendSpec>& run_specs);
  /// Creates every backend still ok; loads the whole model on those that read tensors by name.
  OpenBackends open_backends(const std::vector<BackendSpec>& specs,
                             const std::vector<BackendSpec>& run_specs,
                             std::vector<std::future<int64_t>>& plain_counts);
  /// Every batch on every backend still ok. Errors: the reference's.
  Status compare_batches(const std::vector<BackendSpec>& specs,
                         const std::vector<BackendSpec>& run_specs, OpenBackends& open);
  /// Notes how many of backend `k`'s batches ran as segments, and why the others did not.
  void note_segments(size_t k, size_t batches, const CarriedValues& carried);
  /// The notes, first divergences and figures of the report, once everything ran.
  void finish(const std::vector<BackendSpec>& specs);
  /// Sets LayerComparison::input_failed from the comparisons of each node's inputs.
  void mark_failed_inputs();
  void pick_first_divergences();
  /// Copies the golden values the first divergent node reads and writes into
  /// rep_.first_node_values when the inputs, the loaded values or the store hold them all, so
  /// that save_layerwise_repro needs no reference run of its own.
  void keep_first_node_values();

  // --- batch_run.cpp: one batch on one backend ------------------------------------------------
  /// Loads `path` on a copy of `spec` that saves ONNX Runtime's optimized graph, returns its
  /// node count (-1 when ORT could not save it).
  int64_t optimized_node_count(const BackendSpec& spec, const std::filesystem::path& path,
                               const std::string& tag);
  /// The model with the batch's tensors as its first graph outputs; `added` counts those that
  /// were not graph outputs already.
  onnx::ModelProto batch_model(const Batch& batch, bool cast_float16, int* added, int* casts) const;
  /// Suffix of the float32 output a float16 tensor is read through (batch_model).
  static constexpr std::string_view kFloat32Suffix = "__onnxdbg_float32";
  Expected<SessionRunResult> run_with_outputs(size_t k, const BackendSpec& spec, Backend& backend,
                                              const Batch& batch, int64_t plain_nodes,
                                              const TensorSink& sink, CarriedValues* carried);
  /// The batch run as a segment (segment_model) on `backend`; errors: building, loading or
  /// running it.
  Expected<SessionRunResult> run_segment(size_t k, Backend& backend, const Batch& batch,
                                         CarriedValues& carried, const TensorSink& sink);
  Expected<bool> run_and_compare(size_t k, const BackendSpec& spec, Backend& backend,
                                 Session* observing, const Batch& part, int64_t plain_nodes,
                                 CarriedValues* carried);

  // --- segment.cpp: backend runs by segment ---------------------------------------------------
  /// The batches backend `spec` gets the tensors in (make_batches under the pass's limits).
  std::vector<Batch> backend_batches(const BackendSpec& spec) const;
  /// Whether backend `k` computes each batch as a segment, and the values segments read from
  /// earlier ones (with its spill file: the store is null when it does not). It does when the
  /// golden values come without a reference run beside each batch (the store holds them all, or
  /// they are loaded), there are two batches or more, the backend takes extra outputs (not
  /// observes_by_name), is not precision=fp16, no tensor is float16 (those are read through Casts,
  /// batch_model), and every value a segment reads from an earlier one is a compared tensor
  /// (fallback says which is not).
  CarriedValues plan_segments(size_t k, const BackendSpec& spec);
  /// The main-graph nodes of the batch's segment, from the node after the previous batch's last
  /// producer (or the producer of its first tensor, when that node's outputs straddle two
  /// batches) to the producer of its last tensor, with the Constant nodes they read (into `nodes`,
  /// ascending; may be null), and the values they read that an earlier segment computed (not graph
  /// inputs, initializers or Constant outputs), in the order read.
  std::vector<std::string> segment_plan(const Batch& batch, std::vector<int>* nodes) const;
  /// The segment's model: its nodes, the initializers they read, the graph inputs they read and
  /// every value an earlier segment computed as graph inputs typed from the backend's value in
  /// `carried`, the batch's tensors as graph outputs. `feeds` gets the run's inputs (views into
  /// `carried`). Errors: kNotFound when `carried` lacks a value the segment reads.
  Expected<onnx::ModelProto> segment_model(const Batch& batch, const GoldenStore& carried,
                                           TensorMap* feeds) const;
  /// Runs `backend_side` on a thread of its own while the reference produces `stream`'s golden
  /// values on this one. Errors: the reference's; kInvalidArgument when no thread can be started.
  Status beside_reference(size_t k, GoldenStream& stream,
                          const std::function<void()>& backend_side);
  /// The batch's comparisons on backend `k`, not run yet (tensor, backend, tolerance).
  std::vector<LayerComparison> batch_comparisons(size_t k, const Batch& part) const;
  /// Compares backend `k`'s `value` of c's tensor with its golden value into `c`.
  void compare_arrived(size_t k, LayerComparison& c, const Tensor& value,
                       const Tensor& golden) const;
  /// Counts and keeps the comparisons of a batch that ran (`got`), in the batch's order.
  void record_batch(size_t k, const SessionRunResult& got, std::vector<LayerComparison>& cs);

  // --- float16.cpp: precision=fp16 backends ---------------------------------------------------
  Status prepare_fp16(const std::vector<BackendSpec>& specs);
  Expected<int64_t> save_for_backend(size_t k, onnx::ModelProto& m,
                                     const std::filesystem::path& path);
  void note_float32_tensors(size_t k, const std::vector<BackendSpec>& specs);
  /// Nodes of `nodes` that read a tensor that overflowed on float16 backend `k`.
  std::set<size_t> nodes_reading_overflow(size_t k, const std::vector<size_t>& nodes) const;

  // --- isolate.cpp: divergent nodes alone on golden inputs ------------------------------------
  Status isolate(const std::vector<BackendSpec>& specs,
                 const std::vector<std::unique_ptr<Backend>>& backends);
  /// Node index -> the backends on which one of its outputs fails.
  std::map<size_t, std::set<size_t>> failing_nodes() const;
  /// The failing nodes in chunks whose golden reads and outputs fit the batch limit.
  std::vector<std::vector<size_t>> isolation_chunks(
      const std::map<size_t, std::set<size_t>>& by_node) const;
  /// Isolates the nodes of `chunk` on every backend where they fail (`by_node`), with golden
  /// values from one more reference run (GoldenSource::capture: loaded values need none, unless
  /// some the nodes read are missing). Errors: the reference's.
  Status isolate_chunk(const std::vector<BackendSpec>& specs,
                       const std::vector<std::unique_ptr<Backend>>& backends,
                       const std::vector<size_t>& chunk,
                       const std::map<size_t, std::set<size_t>>& by_node, size_t* done);
  void remember_first_node_values(const std::vector<size_t>& chunk, const TensorMap& golden,
                                  const TensorMap& constants);
  /// The index of the backend whose BackendSpec::to_string() is `name` (0 when none is).
  size_t backend_index(const std::string& name) const;
  void isolate_nodes(size_t k, Backend& backend, const std::vector<size_t>& nodes,
                     TensorMap& golden, const TensorMap& constants);
  void mark_isolation_error(size_t k, size_t node_index, const Status& st);
  Status isolate_together(size_t k, Backend& backend, const std::vector<size_t>& nodes,
                          TensorMap& golden, const TensorMap& constants);
  /// Compares the isolated run's outputs `r` of `nodes` on backend `k` with their golden values.
  void record_isolated(size_t k, const std::vector<size_t>& nodes, const SessionRunResult& r,
                       const TensorMap& golden);

  // What collect() makes and compare() uses: the pass's temporary folder, the golden values'
  // source and their spill file (null when the values are loaded or the file could not be made).
  std::unique_ptr<TempDir> tmp_dir_;
  std::unique_ptr<GoldenSource> src_;
  std::unique_ptr<GoldenStore> store_;
  double collect_seconds_ = 0;

  const LoadedModel& model_;
  const TensorMap& inputs_;
  const LayerwiseOptions& opt_;
  LayerwiseReport& rep_;
  uint64_t limit_ = 0;  // bytes per batch: the budget / kLayerwiseCopies
  std::filesystem::path tmp_;
  std::optional<size_t> first_values_node_;        // whose values rep_.first_node_values holds
  std::vector<bool> fp16_;                         // per backend: precision=fp16
  std::vector<int64_t> plain_casts_;               // per fp16 backend: Casts in the whole model
  std::vector<std::filesystem::path> load_paths_;  // per backend: the whole model it loads
  std::vector<CarriedValues> segments_;            // per backend: plan_segments
  bool copy_ = false;                              // see the constructor
  std::filesystem::path whole_path_;               // the whole model as backends load it
};

}  // namespace onnxdbg::layerwise_detail
