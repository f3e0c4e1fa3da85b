// One batch of the layerwise pass on one backend (see pass.h): the model with the batch's
// tensors as extra outputs (or the observing session's layers by name), run beside the reference
// and compared tensor by tensor as both arrive.
#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "comparator/precision.h"
#include "layerwise/golden_store.h"
#include "layerwise/golden_stream.h"
#include "layerwise/node_models.h"
#include "layerwise/pass.h"
#include "model/graph.h"

namespace onnxdbg::layerwise_detail {

namespace fs = std::filesystem;

TensorComparison compare_layer(const Tensor& actual, const Tensor& golden, const Tolerance& tol,
                               ErrorStat stat) {
  if (actual.shape() != golden.shape() && actual.numel() == golden.numel()) {
    if (auto r = actual.reshaped(golden.shape())) return compare_tensors(*r, golden, tol, stat);
  }
  return compare_tensors(actual, golden, tol, stat);
}

namespace {

/// The backend's tensors handed from the thread reading its run to a thread comparing them, at
/// most `window` bytes queued or being compared (one tensor is always let through): reading the
/// next tensor from the worker overlaps comparing this one, where one thread did both and left
/// the other core idle.
class CompareQueue {
 public:
  using Compare = std::function<void(size_t, Tensor&&)>;
  CompareQueue(uint64_t window, Compare compare) : window_(window), compare_(std::move(compare)) {
    try {
      thread_ = std::thread([this] { loop(); });
    } catch (const std::system_error&) {
      // No thread to be had (a data limit too tight for its stack): push() compares at once.
    }
  }
  /// Stops the thread without rethrowing (a destructor must not): run_and_compare calls
  /// finish() itself, which reports a comparison's exception.
  ~CompareQueue() { stop(); }
  CompareQueue(const CompareQueue&) = delete;
  CompareQueue& operator=(const CompareQueue&) = delete;

  /// Queues tensor `slot` once there is room (compares it at once without a thread).
  void push(size_t slot, Tensor&& value) {
    if (!thread_.joinable()) {
      if (!error_) try {
          compare_(slot, std::move(value));
        } catch (...) {
          error_ = std::current_exception();
        }
      return;
    }
    const uint64_t bytes = value.nbytes();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return queued_ == 0 || queued_ + bytes <= window_; });
    queued_ += bytes;
    queue_.emplace_back(slot, std::move(value));
    cv_.notify_all();
  }

  /// Compares what is queued and stops the thread; rethrows what a comparison threw.
  void finish() {
    stop();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }
  void loop() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return done_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto [slot, value] = std::move(queue_.front());
      queue_.pop_front();
      const uint64_t bytes = value.nbytes();
      lock.unlock();
      try {
        if (!error_) compare_(slot, std::move(value));
      } catch (...) {
        error_ = std::current_exception();
      }
      value = Tensor();  // freed before the reader may queue more
      lock.lock();
      queued_ -= bytes;
      cv_.notify_all();
    }
  }

  const uint64_t window_;
  const Compare compare_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<size_t, Tensor>> queue_;
  uint64_t queued_ = 0;
  bool done_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // started last, once the members above exist
};

}  // namespace

int64_t Pass::optimized_node_count(const BackendSpec& spec, const fs::path& path,
                                   const std::string& tag) {
  BackendSpec s = spec;
  const fs::path opt_path = tmp_ / (tag + ".optimized.onnx");
  s.options["optimized_model"] = opt_path.string();
  auto be = create_backend(s);
  if (!be) return -1;
  auto session = (*be)->load(path, model_.base_dir);
  if (!session) return -1;
  const int64_t n = count_nodes(opt_path);
  std::error_code ec;
  fs::remove(opt_path, ec);
  return n;
}

/// The batch's tensors come first, in topological order (graph outputs among them too), then the
/// other graph outputs: the order in which ONNX Runtime returns them and the reference produces
/// them. A float16 intermediate tensor of the model itself is read through a Cast to float32 of
/// its own (output "<name>" + kFloat32Suffix, counted in *casts): where the backend computed it
/// in float32 and dropped the rounding to float16 (ONNX Runtime's CPU provider, for ops without
/// a float16 kernel), the float32 value shows it, as for precision=fp16 conversions.
onnx::ModelProto Pass::batch_model(const Batch& batch, bool cast_float16, int* added,
                                   int* casts) const {
  onnx::ModelProto m = model_.proto;
  std::map<std::string, onnx::ValueInfoProto> outputs;  // the graph's own, by name
  for (const auto& o : m.graph().output()) outputs.emplace(o.name(), o);
  m.mutable_graph()->clear_output();
  *added = 0;
  *casts = 0;
  for (size_t i = batch.begin; i < batch.end; ++i) {
    const LayerTensor& t = rep_.tensors[i];
    if (auto o = outputs.find(t.name); o != outputs.end()) {
      *m.mutable_graph()->add_output() = std::move(o->second);
      outputs.erase(o);
      continue;
    }
    ++*added;
    if (t.dtype == DType::kFloat16 && cast_float16) {
      const std::string f32 = t.name + std::string(kFloat32Suffix);
      make_cast_node(*m.mutable_graph()->add_node(), f32, t.name, f32, onnx::TensorProto::FLOAT);
      set_tensor_type(m.mutable_graph()->add_output(), f32, DType::kFloat, nullptr);
      ++*casts;
      continue;
    }
    // Element type only: ONNX Runtime infers the shape, and a declared one could conflict.
    set_tensor_type(m.mutable_graph()->add_output(), t.name, t.dtype, nullptr);
  }
  for (const auto& o : model_.proto.graph().output())
    if (auto it = outputs.find(o.name()); it != outputs.end())
      *m.mutable_graph()->add_output() = it->second;
  return m;
}

/// The model with the batch's tensors added as graph outputs (batch_model), loaded and run on
/// `backend`; every output goes to `sink` as it arrives. With `plain_nodes` known, the batch's
/// model is loaded on a copy of `spec` that saves ORT's optimized graph, and a note says when
/// the extra outputs changed it.
Expected<SessionRunResult> Pass::run_with_outputs(size_t k, const BackendSpec& spec,
                                                  Backend& backend, const Batch& batch,
                                                  int64_t plain_nodes, const TensorSink& sink,
                                                  CarriedValues* carried) {
  const size_t bi = static_cast<size_t>(rep_.backends[k].batches);
  if (carried && carried->store) {
    auto r = run_segment(k, backend, batch, *carried, sink);
    if (r) {
      ++carried->segments;
      return r;
    }
    // Whatever a segment could not do (a value not kept, a model the backend refuses), the
    // whole model with extra outputs still can.
    carried->fallback =
        fmt::format("batch {} could not run as a segment ({})", bi + 1, r.status().to_string());
    carried->store.reset();
  }
  int added = 0;
  int float16_casts = 0;
  // A precision=fp16 backend's conversion adds the Casts itself.
  onnx::ModelProto m = batch_model(batch, !fp16_[k], &added, &float16_casts);
  const fs::path path = tmp_ / fmt::format("batch_{}.onnx", bi + 1);
  ODB_ASSIGN_OR_RETURN(int64_t extra_casts, save_for_backend(k, m, path));
  extra_casts += float16_casts;
  m.Clear();
  Expected<std::unique_ptr<Session>> session = internal_error("not loaded");
  const fs::path opt_path = tmp_ / fmt::format("batch_{}.optimized.onnx", bi + 1);
  bool counted = false;
  if (plain_nodes >= 0) {
    BackendSpec s = spec;
    s.options["optimized_model"] = opt_path.string();
    auto be = create_backend(s);
    if (be) {
      session = (*be)->load(path, model_.base_dir);
      counted = session.has_value();
    }
  }
  if (!counted) session = backend.load(path, model_.base_dir);
  if (!session) return session.status();
  progress(
      fmt::format("layerwise: running {} with {} extra outputs", rep_.backends[k].backend, added));
  if (counted) {
    const int64_t with = count_nodes(opt_path);
    std::error_code ec;
    fs::remove(opt_path, ec);
    // A float16 model reads each extra output through a Cast to float32 of its own.
    if (with >= 0 && with != plain_nodes + extra_casts) {
      rep_.backends[k].notes.push_back(fmt::format(
          "batch {}: adding {} outputs changed ONNX Runtime's optimized graph ({} nodes "
          "without, {} with{}); its tensors were read from the changed graph",
          bi + 1, added, plain_nodes, with,
          extra_casts ? fmt::format(", {} of them Casts to float32 for the outputs", extra_casts)
                      : ""));
    }
  }
  auto r = (*session)->run_each(inputs_, {}, sink);
  std::error_code ec;
  fs::remove(path, ec);
  return r;
}

Expected<SessionRunResult> Pass::run_segment(size_t k, Backend& backend, const Batch& batch,
                                             CarriedValues& carried, const TensorSink& sink) {
  const size_t bi = static_cast<size_t>(rep_.backends[k].batches);
  ODB_RETURN_IF_ERROR(carried.store->seal());
  TensorMap feeds;
  ODB_ASSIGN_OR_RETURN(onnx::ModelProto m, segment_model(batch, *carried.store, &feeds));
  const fs::path path = tmp_ / fmt::format("segment_{}.onnx", bi + 1);
  ODB_RETURN_IF_ERROR(save_model(m, path));
  m.Clear();
  auto session = backend.load(path, model_.base_dir);
  std::error_code ec;
  fs::remove(path, ec);
  if (!session) return session.status();
  progress(fmt::format("layerwise: running {} on segment {} ({} outputs)", rep_.backends[k].backend,
                       bi + 1, batch.end - batch.begin));
  auto r = (*session)->run_each(feeds, {}, sink);
  feeds.clear();
  carried.store->release(0, carried.store->covered());
  return r;
}

std::vector<LayerComparison> Pass::batch_comparisons(size_t k, const Batch& part) const {
  std::vector<LayerComparison> cs(part.end - part.begin);
  for (size_t i = part.begin; i < part.end; ++i) {
    LayerComparison& c = cs[i - part.begin];
    c.tensor = i;
    c.backend = rep_.backends[k].backend;
    c.tol = opt_.tolerance.for_output(rep_.tensors[i].name);
  }
  return cs;
}

void Pass::compare_arrived(size_t k, LayerComparison& c, const Tensor& value,
                           const Tensor& golden) const {
  c.observed = true;
  c.result = compare_layer(value, golden, c.tol, opt_.error_stat);
  const LayerTensor& lt = rep_.tensors[c.tensor];
  mark_quantized(c.result, lt.dtype, lt.quant_scale);
  c.computed_in_float32 =
      (fp16_[k] || lt.dtype == DType::kFloat16) && holds_non_float16_values(value);
}

Status Pass::beside_reference(size_t k, GoldenStream& stream,
                              const std::function<void()>& backend_side) {
  std::thread side;
  try {
    side = std::thread(backend_side);
  } catch (const std::system_error& e) {
    return invalid_argument(std::string("cannot start a thread to read ") +
                            rep_.backends[k].backend + "'s tensors beside the reference (" +
                            e.what() + "); raise the data limit (ulimit -d, --max-memory)");
  }
  Status reference = stream.produce(*src_);
  side.join();
  return reference;
}

/// Runs the tensors of `part` on backend `k` (by name on an observing session, else as extra
/// outputs) and compares each tensor as it arrives with its golden value: from the store of the
/// pass's one reference run when it holds the part's tensors, else from a reference run beside
/// the backend's (GoldenStream), so that onnxdbg holds at most the budget's share of golden values
/// and one of the backend's tensors at a time. The comparisons are recorded, in the part's order,
/// only when the run succeeds. Returns false when the backend failed (recorded with fail());
/// errors are the reference's.
Expected<bool> Pass::run_and_compare(size_t k, const BackendSpec& spec, Backend& backend,
                                     Session* observing, const Batch& part, int64_t plain_nodes,
                                     CarriedValues* carried) {
  std::vector<LayerComparison> cs = batch_comparisons(k, part);
  std::map<std::string_view, size_t> slot;  // tensor name -> index into cs
  uint64_t largest = 0;
  for (size_t i = part.begin; i < part.end; ++i) {
    slot.emplace(rep_.tensors[i].name, i - part.begin);
    largest = std::max(largest, rep_.tensors[i].bytes);
  }
  const bool stored = store_ && part.end <= store_->covered();
  // The window: the budget's share for onnxdbg's copies. A backend returns nothing until its
  // run ends, so a smaller one stalls the reference meanwhile; on PP-OCRv4 det 640x640 at
  // 768MiB, `run --layerwise --isolate` took 2.39 s (median of five) with a 64 MiB window,
  // 2.20 s with 128 MiB and 2.17 s with this one (384 MiB), in the same CPU time.
  GoldenStream stream(rep_.tensors, part.begin, part.end, std::max(largest, limit_));
  const auto golden = [&](size_t index) -> std::optional<Tensor> {
    if (!stored) return stream.take(index);
    auto t = store_->get(index);
    if (!t) return std::nullopt;
    return std::move(*t);
  };
  const auto compare = [&](size_t at, Tensor&& value) {
    LayerComparison& c = cs[at];
    std::optional<Tensor> g = golden(part.begin + at);
    if (!g) {
      c.note = "the backend returned it out of topological order; not compared";
      return;
    }
    compare_arrived(k, c, value, *g);
    if (stored) store_->release(part.begin + at, part.begin + at + 1);
  };
  // A quarter of the batch's share: with the tensor being read and the golden values being
  // compared, onnxdbg's copies stay within the share that is not the backend's batch.
  CompareQueue queue(limit_ / 4, compare);
  const TensorSink sink = [&](const std::string& name, Tensor&& value) {
    std::string_view tensor = name;
    if (tensor.size() > kFloat32Suffix.size() &&
        tensor.substr(tensor.size() - kFloat32Suffix.size()) == kFloat32Suffix)
      tensor.remove_suffix(kFloat32Suffix.size());  // read through its Cast to float32
    auto s = slot.find(tensor);
    if (s == slot.end()) return;  // a graph output outside this part
    if (carried && carried->store && carried->needed.count(name))  // a later segment reads it
      carried->store->put(carried->store->covered(), name, value);
    queue.push(s->second, std::move(value));
  };
  Expected<SessionRunResult> got = internal_error("the backend did not run");
  const auto backend_side = [&] {
    try {
      got = observing ? observing->run_each(inputs_, batch_names(rep_.tensors, part), sink)
                      : run_with_outputs(k, spec, backend, part, plain_nodes, sink, carried);
    } catch (const std::exception& e) {
      got = internal_error(std::string("while reading the backend's tensors: ") + e.what());
    }
    try {
      queue.finish();
    } catch (const std::exception& e) {
      got = internal_error(std::string("while comparing the backend's tensors: ") + e.what());
    }
    stream.close();
  };
  if (stored) {
    backend_side();
  } else {
    ODB_RETURN_IF_ERROR(beside_reference(k, stream, backend_side));
  }
  if (!got) {
    fail(k, got.status());
    return false;
  }
  record_batch(k, *got, cs);
  return true;
}

void Pass::record_batch(size_t k, const SessionRunResult& got, std::vector<LayerComparison>& cs) {
  LayerwiseBackend& b = rep_.backends[k];
  ++b.batches;
  for (auto& c : cs) {
    if (!c.observed) {
      auto why = got.not_observed.find(rep_.tensors[c.tensor].name);
      if (why != got.not_observed.end())
        c.note = why->second;
      else if (c.note.empty())
        c.note = "the backend did not return it";
      ++b.not_observed;
    } else {
      ++b.observed;
      b.failed += !c.result.pass;
      b.computed_in_float32 += c.computed_in_float32;
    }
    rep_.comparisons.push_back(std::move(c));
  }
}

}  // namespace onnxdbg::layerwise_detail
