// Private to the layerwise module: the golden values. GoldenSource runs the reference on the
// model's inputs (the whole model, a prefix, or up to the nodes a set of values needs), or hands
// out loaded golden values in the same order; GoldenStream hands a batch's golden values to a
// backend's side as the backend's arrive.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "layerwise/golden_store.h"
#include "layerwise/layerwise.h"
#include "model/model.h"
#include "onnxdbg/status.h"
#include "reference/interpreter.h"

namespace onnxdbg::layerwise_detail {

/// The golden values of one model on one input sample, handed to hooks node output by node
/// output: from reference runs, or loaded (LayerwiseOptions::golden).
class GoldenSource {
 public:
  /// `golden`: loaded golden values (null: the reference gives them all); the reference
  /// interpreter is then created only when a value the map lacks is captured. `model`, `inputs`
  /// and `golden` must outlive the source. Errors: those of reference::Interpreter::create
  /// (kUnsupported, kModelError), without `golden`.
  static Expected<GoldenSource> create(const LoadedModel& model, const TensorMap& inputs,
                                       const reference::InterpreterOptions& options,
                                       const TensorMap* golden = nullptr);
  /// Calls `hook` for every top-level output of the first `end_node` nodes of the main graph
  /// (all by default), in node order: a reference run, or with loaded golden values those of
  /// them that the map holds (no reference run). One run at a time (the hook may run on another
  /// thread). Errors: the reference's.
  Status run(const reference::NodeHook& hook, size_t end_node = SIZE_MAX);
  /// Copies of the named values, from a reference run that stops after the last node producing
  /// one of them; graph inputs come from the inputs given, with loaded golden values every
  /// value the map holds comes from it, and with a store (use_store) every value it holds, as a
  /// view into it (the reference runs only for the others, if any). With loaded golden values
  /// that run reads them in place of its own as it goes (Interpreter::run_prefix's `forced`): a
  /// value the map lacks is computed from the loaded values upstream of it, not from the
  /// model's own, which would carry the error an isolated node then takes for its own.
  /// Errors: the reference's.
  Expected<TensorMap> capture(const std::set<std::string>& names);
  /// From now on capture() takes the values `store` holds from it (not owned; must outlive the
  /// source's captures).
  void use_store(const GoldenStore* store) { store_ = store; }
  /// The loaded golden values, or null when the reference gives them.
  const TensorMap* golden() const { return golden_; }
  const LoadedModel& model() const { return *model_; }
  /// How many reference runs this source made.
  int runs() const { return runs_; }

 private:
  Status run_reference(const reference::NodeHook& hook, size_t end_node,
                       const TensorMap* forced = nullptr);

  const LoadedModel* model_ = nullptr;
  reference::InterpreterOptions options_;
  std::unique_ptr<reference::Interpreter> interp_;  // created on the first reference run
  const TensorMap* inputs_ = nullptr;
  const TensorMap* golden_ = nullptr;
  const GoldenStore* store_ = nullptr;
  std::map<std::string, size_t> producer_;  // node output -> node index in the main graph
  int runs_ = 0;
};

/// The golden values of the tensors [begin, end) of the report, handed from a reference run (or
/// the loaded values, GoldenSource::run) to a backend's side as the backend's values of the same
/// tensors arrive, both in topological order: a merge of two ordered streams, so that neither
/// side's tensors pile up and the reference computes while the backend runs. The reference runs on
/// the calling thread (produce(); its tensors then come from the same heap as every other reference
/// run's), the backend's side on another (take(), close()). The reference waits while the values it
/// produced and nobody took yet exceed `window` bytes (one value is always let through), and stops
/// after the last node producing one of the tensors.
class GoldenStream {
 public:
  GoldenStream(const std::vector<LayerTensor>& tensors, size_t begin, size_t end, uint64_t window);

  /// The reference's side: runs it, keeping copies of the stream's values until taken. Errors:
  /// the reference's; kInvalidArgument when a copy cannot be allocated.
  Status produce(GoldenSource& src);

  /// The backend's side: the golden value of tensor `index`, once the reference has produced
  /// it. Values of earlier tensors not taken by then are dropped: the backend skipped them.
  /// nullopt when the reference failed or stopped without producing it, or when it was produced
  /// and dropped already (the backend gave `index` after a later tensor).
  std::optional<Tensor> take(size_t index);

  /// The backend's side is done: the reference keeps no more values (it still runs to its end).
  void close();

 private:
  void pop_front();
  /// Keeps a copy of a value of the stream, once there is room.
  void offer(const std::string& name, const Tensor& value);

  const uint64_t window_;
  std::map<std::string, size_t> index_;  // tensor name -> index into the report's tensors
  size_t end_node_ = 0;                  // the reference stops before this node
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<size_t, Tensor>> held_;  // produced, not yet taken; topological order
  uint64_t held_bytes_ = 0;
  bool offered_ = false;
  size_t last_offered_ = 0;
  bool done_ = false;
  bool closed_ = false;
};

}  // namespace onnxdbg::layerwise_detail
