// Layerwise localization (see layerwise.h): golden intermediate tensors from the reference's node
// hook, the same tensors from each backend in memory-bounded batches, per-node isolation, and the
// bug-report folder of the first divergent node.
#include "compare/layerwise.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <thread>

#include "backends/isolated.h"
#include "data/test_data.h"
#include "reference/interpreter.h"
#include "runner/precision.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// Bytes a copy of a tensor takes in memory: its buffer as allocate_tensor_bytes (core/tensor.h)
/// allocates it, in whole 2 MiB huge pages from 2 MiB on (each is faulted in whole); strings:
/// their characters.
uint64_t tensor_bytes(const Tensor& t) {
  constexpr uint64_t kHugePage = uint64_t{2} << 20;
  if (t.dtype() != DType::kString)
    return t.nbytes() >= kHugePage ? (t.nbytes() + kHugePage - 1) / kHugePage * kHugePage
                                   : t.nbytes();
  uint64_t n = 0;
  for (const auto& s : t.strings()) n += s.size() + sizeof(std::string);
  return n;
}

struct FloatScan {
  int64_t nonfinite = 0;  ///< NaN and Inf elements
  float max_abs = 0;      ///< largest finite |value| (0 if none)
};

/// Both in one pass, four elements at a time on their bits (GCC vector extensions): |x| is the
/// bits without the sign, finite below the all-ones exponent, and for such values the order of
/// the bits as integers is the order of the values.
FloatScan scan_floats(const float* p, int64_t n) {
  typedef uint32_t V4u __attribute__((vector_size(16)));
  typedef int32_t V4i __attribute__((vector_size(16)));
  const uint32_t kAbs = 0x7fffffffu, kInf = 0x7f800000u;
  const V4u abs_mask = {kAbs, kAbs, kAbs, kAbs}, inf = {kInf, kInf, kInf, kInf};
  V4u vmax = {0, 0, 0, 0};
  V4i vbad = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    V4u u;
    std::memcpy(&u, p + i, sizeof u);
    u &= abs_mask;
    const V4i finite = u < inf;  // -1 where finite
    vbad += finite + 1;          // +1 where not
    const V4u f = u & (V4u)finite;
    vmax = f > vmax ? f : vmax;
  }
  FloatScan s;
  uint32_t m = 0;
  for (int k = 0; k < 4; ++k) {
    s.nonfinite += vbad[k];
    m = std::max(m, vmax[k]);
  }
  for (; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, p + i, sizeof u);
    u &= kAbs;
    if (u < kInf)
      m = std::max(m, u);
    else
      ++s.nonfinite;
  }
  s.max_abs = std::bit_cast<float>(m);
  return s;
}

std::string node_label(const onnx::NodeProto& node, size_t index) {
  return node.name().empty() ? fmt::format("#{} ({})", index, node.op_type())
                             : fmt::format("'{}' ({})", node.name(), node.op_type());
}

/// A temporary folder removed with everything in it when this goes out of scope.
class TempDir {
 public:
  static Expected<TempDir> create(const fs::path& parent) {
    std::error_code ec;
    fs::path base = parent.empty() ? fs::temp_directory_path(ec) : parent;
    if (ec) base = "/tmp";
    std::string templ = (base / "onnxdbg-layerwise-XXXXXX").string();
    if (!mkdtemp(templ.data())) {
      return invalid_argument(fmt::format(
          "cannot create a temporary folder in '{}' for the layerwise models", base.string()));
    }
    TempDir d;
    d.path_ = templ;
    return d;
  }
  TempDir() = default;
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// Names a graph reads without defining them: outer-scope values of a subgraph.
void free_names(const onnx::GraphProto& g, std::set<std::string>* out) {
  std::set<std::string> defined;
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty() && !defined.count(in)) out->insert(in);
    for (const auto& a : n.attribute()) {
      std::set<std::string> inner;
      if (a.has_g()) free_names(a.g(), &inner);
      for (const auto& sg : a.graphs()) free_names(sg, &inner);
      for (const auto& name : inner)
        if (!defined.count(name)) out->insert(name);
    }
    for (const auto& o : n.output()) defined.insert(o);
  }
  for (const auto& v : g.output())
    if (!defined.count(v.name())) out->insert(v.name());
}

/// Every value a main-graph node reads: its inputs and what its subgraphs read from outside.
std::vector<std::string> node_reads(const onnx::NodeProto& node) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const auto& in : node.input())
    if (!in.empty() && seen.insert(in).second) out.push_back(in);
  std::set<std::string> outer;
  for (const auto& a : node.attribute()) {
    if (a.has_g()) free_names(a.g(), &outer);
    for (const auto& sg : a.graphs()) free_names(sg, &outer);
  }
  for (const auto& name : outer)
    if (seen.insert(name).second) out.push_back(name);
  return out;
}

void set_tensor_type(onnx::ValueInfoProto* vi, const std::string& name, DType dtype,
                     const Shape* shape) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dtype));
  if (shape) {
    auto* s = tt->mutable_shape();
    for (int64_t d : *shape) s->add_dim()->set_dim_value(d);
  }
}

/// The model of `nodes` (main-graph indices of `model`), each reading golden values: initializers
/// stay initializers (external data read in), `constants` become initializers, every other read
/// value becomes a graph input typed from `values`. Outputs are typed from `values` and renamed
/// with `rename` (identity for a repro model).
Expected<onnx::ModelProto> nodes_model(const LoadedModel& model, const std::vector<size_t>& nodes,
                                       const TensorMap& values, const TensorMap& constants,
                                       const std::function<std::string(const std::string&)>& rename,
                                       bool output_shapes) {
  const auto& g = model.proto.graph();
  onnx::ModelProto m;
  m.set_ir_version(model.proto.ir_version());
  *m.mutable_opset_import() = model.proto.opset_import();
  m.set_producer_name("onnxdbg layerwise");
  auto* mg = m.mutable_graph();
  mg->set_name(nodes.size() == 1 ? "onnxdbg_node" : "onnxdbg_isolated_nodes");
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer()) inits[t.name()] = &t;
  std::set<std::string> declared;
  for (size_t idx : nodes) {
    if (idx >= static_cast<size_t>(g.node_size()))
      return invalid_argument(fmt::format("node index {} is out of range", idx));
    const auto& node = g.node(static_cast<int>(idx));
    for (const auto& name : node_reads(node)) {
      if (!declared.insert(name).second) continue;
      auto v = values.find(name);
      auto init = inits.find(name);
      auto c = constants.find(name);
      if (v == values.end() && init != inits.end()) {
        ODB_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(*init->second, model.base_dir));
        *mg->add_initializer() = tensor_to_proto(t, name);
      } else if (v == values.end() && c != constants.end()) {
        *mg->add_initializer() = tensor_to_proto(c->second, name);
      } else if (v != values.end()) {
        set_tensor_type(mg->add_input(), name, v->second.dtype(), &v->second.shape());
      } else {
        return internal_error(
            fmt::format("no golden value for '{}', read by node {}", name, node_label(node, idx)));
      }
    }
    auto* copy = mg->add_node();
    *copy = node;
    for (int i = 0; i < copy->output_size(); ++i) {
      const std::string& out = node.output(i);
      if (out.empty()) continue;
      copy->set_output(i, rename(out));
      auto v = values.find(out);
      if (v == values.end()) continue;  // an output nobody reads and we do not compare
      set_tensor_type(mg->add_output(), rename(out), v->second.dtype(),
                      output_shapes ? &v->second.shape() : nullptr);
    }
  }
  return m;
}

/// Gives the temp folder access to the model's external data: a symlink per location, so a
/// modified model saved there resolves the same relative locations. Locations that are absolute
/// or escape the model's folder are refused, as when the model itself is read.
Status link_external_data(const LoadedModel& model, const fs::path& dir) {
  std::set<std::string> done;
  std::function<Status(const onnx::GraphProto&)> visit = [&](const onnx::GraphProto& g) -> Status {
    for (const auto& t : g.initializer()) {
      if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
      for (const auto& kv : t.external_data()) {
        if (kv.key() != "location" || !done.insert(kv.value()).second) continue;
        const fs::path loc = fs::path(kv.value()).lexically_normal();
        if (loc.is_absolute() || loc.empty() || *loc.begin() == "..") {
          return model_error(fmt::format(
              "tensor '{}' has external data at '{}', which escapes the model's folder; "
              "refusing to read it",
              t.name(), kv.value()));
        }
        std::error_code ec;
        fs::create_directories((dir / loc).parent_path(), ec);
        fs::create_symlink(fs::absolute(model.base_dir / loc, ec), dir / loc, ec);
        if (ec) {
          return invalid_argument(fmt::format("cannot link external data '{}' into '{}': {}",
                                              kv.value(), dir.string(), ec.message()));
        }
      }
    }
    for (const auto& n : g.node())
      for (const auto& a : n.attribute()) {
        if (a.has_g()) ODB_RETURN_IF_ERROR(visit(a.g()));
        for (const auto& sg : a.graphs()) ODB_RETURN_IF_ERROR(visit(sg));
      }
    return Status::ok();
  };
  return visit(model.proto.graph());
}

int64_t count_nodes(const fs::path& path) {
  auto m = load_model(path);
  return m ? m->proto.graph().node_size() : -1;
}

/// OpenCV reads intermediate tensors by layer name; others get them as extra graph outputs.
bool observes_by_name(const BackendSpec& spec) { return spec.name == "opencv"; }

/// Reference runs of one model on one input sample, handing node outputs to hooks.
class GoldenSource {
 public:
  static Expected<GoldenSource> create(const LoadedModel& model, const TensorMap& inputs,
                                       const reference::InterpreterOptions& options) {
    GoldenSource s;
    ODB_ASSIGN_OR_RETURN(s.interp_,
                         reference::Interpreter::create(model.proto, model.base_dir, options));
    s.inputs_ = &inputs;
    const auto& g = model.proto.graph();
    for (int i = 0; i < g.node_size(); ++i)
      for (const auto& o : g.node(i).output()) s.producer_[o] = static_cast<size_t>(i);
    return s;
  }
  /// Runs the first `end_node` nodes of the main graph (all by default), calling `hook` for
  /// every top-level node output. One run at a time (the hook may run on another thread).
  Status run(const reference::NodeHook& hook, size_t end_node = SIZE_MAX) {
    ++runs_;
    return interp_->run_prefix(*inputs_, hook, end_node);
  }
  /// Copies of the named values (node outputs; graph inputs come from the inputs given), from a
  /// run that stops after the last node producing one of them.
  Expected<TensorMap> capture(const std::set<std::string>& names) {
    TensorMap out;
    size_t end_node = 0;
    for (const auto& n : names) {
      if (auto it = inputs_->find(n); it != inputs_->end()) out[n] = it->second;
      if (auto p = producer_.find(n); p != producer_.end())
        end_node = std::max(end_node, p->second + 1);
    }
    if (end_node == 0) return out;
    ODB_RETURN_IF_ERROR(run(
        [&](const onnx::NodeProto&, size_t, const std::string& tensor, const Tensor& value) {
          if (names.count(tensor)) out[tensor] = value;
        },
        end_node));
    return out;
  }
  int runs() const { return runs_; }

 private:
  std::unique_ptr<reference::Interpreter> interp_;
  const TensorMap* inputs_ = nullptr;
  std::map<std::string, size_t> producer_;  // node output -> node index in the main graph
  int runs_ = 0;
};

/// The golden values of the tensors [begin, end) of the report, handed from a reference run to a
/// backend's side as the backend's values of the same tensors arrive, both in topological
/// order: a merge of two ordered streams, so that neither side's tensors pile up and the
/// reference computes while the backend runs. The reference runs on the calling thread
/// (produce(); its tensors then come from the same heap as every other reference run's), the
/// backend's side on another (take(), close()). The reference waits while the values it produced
/// and nobody took yet exceed `window` bytes (one value is always let through), and stops after
/// the last node producing one of the tensors.
class GoldenStream {
 public:
  GoldenStream(const std::vector<LayerTensor>& tensors, size_t begin, size_t end, uint64_t window)
      : window_(window) {
    for (size_t i = begin; i < end; ++i) {
      index_.emplace(tensors[i].name, i);
      end_node_ = std::max(end_node_, tensors[i].node_index + 1);
    }
  }

  /// The reference's side: runs it, keeping copies of the stream's values until taken. Errors:
  /// the reference's; kInvalidArgument when a copy cannot be allocated.
  Status produce(GoldenSource& src) {
    Status st;
    try {
      st = src.run([this](const onnx::NodeProto&, size_t, const std::string& name,
                          const Tensor& value) { offer(name, value); },
                   end_node_);
    } catch (const std::bad_alloc&) {
      st = invalid_argument("out of memory while copying golden values; lower --layerwise-memory");
    }
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_all();
    return st;
  }

  /// The backend's side: the golden value of tensor `index`, once the reference has produced
  /// it. Values of earlier tensors not taken by then are dropped: the backend skipped them.
  /// nullopt when the reference failed or stopped without producing it, or when it was produced
  /// and dropped already (the backend gave `index` after a later tensor).
  std::optional<Tensor> take(size_t index) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      while (!held_.empty() && held_.front().first < index) pop_front();
      if (!held_.empty()) {
        if (held_.front().first != index) return std::nullopt;
        Tensor t = std::move(held_.front().second);
        pop_front();
        return t;
      }
      if (done_ || (offered_ && last_offered_ >= index)) return std::nullopt;
      cv_.wait(lock);
    }
  }

  /// The backend's side is done: the reference keeps no more values (it still runs to its end).
  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    held_.clear();
    held_bytes_ = 0;
    cv_.notify_all();
  }

 private:
  void pop_front() {
    held_bytes_ -= tensor_bytes(held_.front().second);
    held_.pop_front();
    cv_.notify_all();
  }

  /// Keeps a copy of a value of the stream, once there is room.
  void offer(const std::string& name, const Tensor& value) {
    auto it = index_.find(name);
    if (it == index_.end()) return;
    const uint64_t bytes = tensor_bytes(value);
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return closed_ || held_.empty() || held_bytes_ + bytes <= window_; });
      if (closed_) return;
    }
    Tensor copy = value;  // outside the lock: the backend's side goes on meanwhile
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    held_bytes_ += bytes;
    held_.emplace_back(it->second, std::move(copy));
    offered_ = true;
    last_offered_ = it->second;
    cv_.notify_all();
  }

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

struct Batch {
  size_t begin = 0, end = 0;  // tensor indices [begin, end)
  uint64_t bytes = 0;
};

/// Compares a backend's value of a tensor with its golden value; OpenCV's own dims (it drops or
/// merges some) are put back to the golden shape when the element count agrees.
TensorComparison compare_layer(const Tensor& actual, const Tensor& golden, const Tolerance& tol,
                               ErrorStat stat) {
  if (actual.shape() != golden.shape() && actual.numel() == golden.numel()) {
    if (auto r = actual.reshaped(golden.shape())) return compare_tensors(*r, golden, tol, stat);
  }
  return compare_tensors(actual, golden, tol, stat);
}

class Runner {
 public:
  Runner(const LoadedModel& model, const TensorMap& inputs, const LayerwiseOptions& options,
         LayerwiseReport& rep)
      : model_(model), inputs_(inputs), opt_(options), rep_(rep) {}

  Status run(const std::vector<BackendSpec>& specs) {
    const auto t0 = Clock::now();
    rep_.memory_budget = opt_.memory_budget;
    limit_ = std::max<uint64_t>(1, opt_.memory_budget / kLayerwiseCopies);
    ODB_ASSIGN_OR_RETURN(TempDir tmp, TempDir::create(opt_.temp_dir));
    ODB_RETURN_IF_ERROR(link_external_data(model_, tmp.path()));
    tmp_ = tmp.path();
    ODB_ASSIGN_OR_RETURN(GoldenSource src, GoldenSource::create(model_, inputs_, opt_.reference));
    src_ = &src;
    for (const auto& spec : specs) {
      LayerwiseBackend b;
      b.backend = spec.to_string();
      rep_.backends.push_back(std::move(b));
    }

    // ONNX Runtime without its arena: each batch is a new session in the same worker, which then
    // reuses the memory the previous one freed instead of faulting in fresh arena regions.
    // precision=fp16 is ours, not the backend's: it gets the models converted (prepare_fp16,
    // save_for_backend).
    std::vector<BackendSpec> run_specs = specs;
    for (auto& s : run_specs) {
      s = without_precision(s);
      if (s.name == "onnxruntime") s.options.try_emplace("arena", "off");
    }
    ODB_RETURN_IF_ERROR(prepare_fp16(specs));
    // The optimized graph of the unmodified model, to see whether extra outputs change it: loaded
    // in a worker of its own while the first reference run goes on here.
    std::vector<std::future<int64_t>> plain_counts(specs.size());
    for (size_t k = 0; k < specs.size(); ++k)
      if (specs[k].name == "onnxruntime" && rep_.backends[k].ok)
        plain_counts[k] = std::async(std::launch::async, [this, &run_specs, k] {
          return optimized_node_count(run_specs[k], load_paths_[k], fmt::format("plain_{}", k));
        });

    progress("layerwise: reference run (which tensors, how large)");
    const auto collect_start = Clock::now();
    ODB_RETURN_IF_ERROR(collect());
    // A backend's side waits for the reference beside it, so its run timeout must cover the
    // reference's run too: unless given, the default plus four times the first reference run.
    const double reference_seconds =
        std::chrono::duration<double>(Clock::now() - collect_start).count();
    for (auto& s : run_specs)
      if (s.name != "reference" && !s.options.count("timeout"))
        s.options["timeout"] = fmt::format(
            "{:.0f}", IsolationOptions{}.run_timeout_seconds + 4 * reference_seconds + 1);

    std::vector<std::unique_ptr<Backend>> backends(specs.size());
    std::vector<std::unique_ptr<Session>> observing(specs.size());
    std::vector<int64_t> plain_nodes(specs.size(), -1);
    for (size_t k = 0; k < specs.size(); ++k) {
      if (plain_counts[k].valid()) plain_nodes[k] = plain_counts[k].get();
      if (!rep_.backends[k].ok) continue;
      auto be = create_backend(run_specs[k]);
      if (!be) {
        fail(k, be.status());
        continue;
      }
      backends[k] = std::move(*be);
      if (observes_by_name(specs[k])) {
        progress("layerwise: loading the model on " + specs[k].to_string());
        auto s = backends[k]->load(load_paths_[k]);
        if (!s) {
          fail(k, s.status());
          continue;
        }
        observing[k] = std::move(*s);
      }
    }

    for (size_t k = 0; k < specs.size(); ++k) {
      if (!rep_.backends[k].ok) continue;
      // One run of the model per batch. Extra graph outputs: at most max_extra_outputs per run;
      // OpenCV reads any number of layers by name in one run.
      const std::vector<Batch> batches =
          make_batches(observing[k] ? SIZE_MAX : std::max<size_t>(1, opt_.max_extra_outputs));
      for (size_t bi = 0; bi < batches.size() && rep_.backends[k].ok; ++bi) {
        const Batch& batch = batches[bi];
        progress(fmt::format("layerwise: {} batch {}/{} ({} tensors, {})", specs[k].to_string(),
                             bi + 1, batches.size(), batch.end - batch.begin,
                             memory_size_string(batch.bytes)));
        Expected<bool> ran = run_and_compare(k, run_specs[k], *backends[k], observing[k].get(),
                                             batch, plain_nodes[k]);
        if (!ran) return ran.status();  // the reference failed
        if (!*ran) break;               // the backend failed (recorded)
      }
    }

    if (opt_.isolate) ODB_RETURN_IF_ERROR(isolate(specs, backends));
    for (size_t k = 0; k < specs.size(); ++k) note_float32_tensors(k, specs);
    pick_first_divergences();
    rep_.reference_runs = src_->runs();
    rep_.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    rep_.peak_rss_bytes = peak_rss_bytes();
    src_ = nullptr;
    return Status::ok();
  }

 private:
  void progress(const std::string& s) const {
    if (opt_.progress) opt_.progress(s);
  }

  void fail(size_t k, const Status& st) {
    rep_.backends[k].ok = false;
    rep_.backends[k].error = st.to_string();
  }

  /// Which backends run in float16, and the whole model they load: the model itself, or one copy
  /// converted to float16 shared by every precision=fp16 backend. A model the conversion refuses
  /// fails those backends only.
  Status prepare_fp16(const std::vector<BackendSpec>& specs) {
    fp16_.assign(specs.size(), false);
    plain_casts_.assign(specs.size(), 0);
    load_paths_.assign(specs.size(), model_.path);
    std::optional<Expected<int64_t>> converted;
    const fs::path path = tmp_ / "model_fp16.onnx";
    for (size_t k = 0; k < specs.size(); ++k) {
      fp16_[k] = specs[k].option("precision") == "fp16";
      if (!fp16_[k]) continue;
      if (!converted) {
        progress("layerwise: converting the model to float16");
        onnx::ModelProto m = model_.proto;
        converted = convert_model_to_fp16(m, model_.base_dir);
        if (*converted) {
          if (Status st = save_model(m, path); !st) converted = Expected<int64_t>(st);
        }
      }
      if (!*converted) {
        fail(k, converted->status());
        continue;
      }
      load_paths_[k] = path;
      plain_casts_[k] = **converted;
    }
    return Status::ok();
  }

  /// Saves `m` (the model, or part of it, with float32 types) as backend `k` loads it: converted
  /// to float16 for a precision=fp16 backend. Returns the Casts the conversion added beyond
  /// those of the whole model's conversion (one per extra float output), 0 for others.
  Expected<int64_t> save_for_backend(size_t k, onnx::ModelProto& m, const fs::path& path) {
    int64_t extra = 0;
    if (fp16_[k]) {
      ODB_ASSIGN_OR_RETURN(int64_t casts, convert_model_to_fp16(m, model_.base_dir));
      extra = casts - plain_casts_[k];
    }
    ODB_RETURN_IF_ERROR(save_model(m, path));
    return extra;
  }

  /// A float16 backend that computed some tensors in float32 does not show float16's rounding or
  /// overflow there: say how many and where, once.
  void note_float32_tensors(size_t k, const std::vector<BackendSpec>& specs) {
    LayerwiseBackend& b = rep_.backends[k];
    if (!fp16_[k]) return;
    int floats = 0, isolated = 0, alone_in_float32 = 0;
    const LayerComparison *first = nullptr, *first_alone = nullptr;
    for (const auto& c : rep_.comparisons) {
      if (c.backend != b.backend || !c.observed || rep_.tensors[c.tensor].dtype != DType::kFloat)
        continue;
      ++floats;
      if (c.computed_in_float32 && !first) first = &c;
      isolated += c.own.has_value();
      alone_in_float32 += c.own_computed_in_float32;
      if (c.own_computed_in_float32 && !first_alone) first_alone = &c;
    }
    const std::string why = float32_compute_reason(specs[k].name);
    auto where = [&](const LayerComparison& c) {
      const LayerTensor& t = rep_.tensors[c.tensor];
      return fmt::format(
          "'{}' of node {}", t.name,
          node_label(model_.proto.graph().node(static_cast<int>(t.node_index)), t.node_index));
    };
    if (first)
      b.notes.push_back(fmt::format(
          "{} of {} float tensors hold values float16 cannot represent (first: {}): the backend "
          "computed them in float32, so float16 rounding and overflow do not show there{}",
          b.computed_in_float32, floats, where(*first), why));
    if (first_alone)
      b.notes.push_back(fmt::format(
          "{} of {} isolated float tensors hold values float16 cannot represent (first: {}): "
          "alone, the backend computed those nodes in float32, so their own error shows no "
          "float16 rounding or overflow{}",
          alone_in_float32, isolated, where(*first_alone), first ? "" : why));
  }

  /// First reference run: metadata of every compared tensor.
  Status collect() {
    std::string too_big;
    uint64_t too_big_bytes = 0;
    ODB_RETURN_IF_ERROR(src_->run([&](const onnx::NodeProto& node, size_t index,
                                      const std::string& name, const Tensor& value) {
      if (node.op_type() == "Constant" && node.domain().empty()) return;  // model data
      LayerTensor lt;
      lt.name = name;
      lt.node_index = index;
      lt.node = node.name();
      lt.op_type = node.op_type();
      lt.dtype = value.dtype();
      lt.shape = value.shape();
      lt.bytes = tensor_bytes(value);
      if (value.dtype() == DType::kFloat) {
        const FloatScan f = scan_floats(value.data<float>(), value.numel());
        lt.golden_nan_or_inf = f.nonfinite;
        lt.golden_max_abs = f.max_abs;
      } else if (is_floating(value.dtype())) {
        lt.golden_nan_or_inf = count_nan_or_inf(value);
        for (int64_t i = 0; i < value.numel(); ++i) {
          const double v = std::abs(value.get_as_double(i));
          if (std::isfinite(v)) lt.golden_max_abs = std::max(lt.golden_max_abs, v);
        }
      }
      if (lt.bytes > limit_ && too_big.empty()) {
        too_big = name + "' of node " + node_label(node, index);
        too_big_bytes = lt.bytes;
      }
      rep_.tensors.push_back(std::move(lt));
    }));
    if (!too_big.empty()) {
      return invalid_argument(fmt::format(
          "--layerwise-memory {} is too small for tensor '{}, which holds {}: the budget must "
          "hold {} copies of the largest tensor, at least {}",
          memory_size_string(opt_.memory_budget), too_big, memory_size_string(too_big_bytes),
          kLayerwiseCopies, memory_size_string(too_big_bytes * kLayerwiseCopies)));
    }
    return Status::ok();
  }

  /// Consecutive tensors (topological order) in as few batches as limit_ bytes and
  /// `max_tensors` tensors per batch allow, with their bytes spread as evenly as that count allows:
  /// the backend's first run faults in fresh memory for its whole batch (1-3 ms per MiB on a
  /// virtual machine), later runs reuse it, so a smaller largest batch costs less.
  std::vector<Batch> make_batches(size_t max_tensors) const {
    const std::vector<Batch> fewest = greedy_batches(limit_, max_tensors);
    uint64_t total = 0, largest = 0;
    for (const auto& t : rep_.tensors) {
      total += t.bytes;
      largest = std::max(largest, t.bytes);
    }
    // The smallest byte limit, from an even share up, that still needs no more batches.
    const uint64_t even = std::max(largest, total / std::max<size_t>(1, fewest.size()));
    for (uint64_t cap = even; cap < limit_; cap += std::max<uint64_t>(1, (limit_ - even) / 16)) {
      std::vector<Batch> b = greedy_batches(cap, max_tensors);
      if (b.size() <= fewest.size()) return b;
    }
    return fewest;
  }

  /// Greedy: a batch ends when the next tensor would take it over `max_bytes` or `max_tensors`.
  std::vector<Batch> greedy_batches(uint64_t max_bytes, size_t max_tensors) const {
    std::vector<Batch> batches;
    Batch cur;
    for (size_t i = 0; i < rep_.tensors.size(); ++i) {
      const uint64_t b = rep_.tensors[i].bytes;
      if (cur.end > cur.begin &&
          (cur.bytes + b > max_bytes || cur.end - cur.begin >= max_tensors)) {
        batches.push_back(cur);
        cur = Batch{i, i, 0};
      }
      cur.end = i + 1;
      cur.bytes += b;
    }
    if (cur.end > cur.begin) batches.push_back(cur);
    return batches;
  }

  std::vector<std::string> batch_names(const Batch& b) const {
    std::vector<std::string> names;
    for (size_t i = b.begin; i < b.end; ++i) names.push_back(rep_.tensors[i].name);
    return names;
  }

  /// Loads `path` on a copy of `spec` that saves ONNX Runtime's optimized graph, returns its
  /// node count (-1 when ORT could not save it).
  int64_t optimized_node_count(const BackendSpec& spec, const fs::path& path,
                               const std::string& tag) {
    BackendSpec s = spec;
    const fs::path opt_path = tmp_ / (tag + ".optimized.onnx");
    s.options["optimized_model"] = opt_path.string();
    auto be = create_backend(s);
    if (!be) return -1;
    auto session = (*be)->load(path);
    if (!session) return -1;
    const int64_t n = count_nodes(opt_path);
    std::error_code ec;
    fs::remove(opt_path, ec);
    return n;
  }

  /// The model with the batch's tensors added as graph outputs, loaded and run on `backend`;
  /// every output goes to `sink` as it arrives. The batch's tensors come first, in topological
  /// order (graph outputs among them too), then the other graph outputs: the order in which
  /// ONNX Runtime returns them and the reference produces them.
  Expected<RunResult> run_with_outputs(size_t k, const BackendSpec& spec, Backend& backend,
                                       const Batch& batch, int64_t plain_nodes,
                                       const TensorSink& sink) {
    const size_t bi = static_cast<size_t>(rep_.backends[k].batches);
    onnx::ModelProto m = model_.proto;
    std::map<std::string, onnx::ValueInfoProto> outputs;  // the graph's own, by name
    for (const auto& o : m.graph().output()) outputs.emplace(o.name(), o);
    m.mutable_graph()->clear_output();
    int added = 0;
    for (size_t i = batch.begin; i < batch.end; ++i) {
      const LayerTensor& t = rep_.tensors[i];
      if (auto o = outputs.find(t.name); o != outputs.end()) {
        *m.mutable_graph()->add_output() = std::move(o->second);
        outputs.erase(o);
        continue;
      }
      // Element type only: ONNX Runtime infers the shape, and a declared one could conflict.
      set_tensor_type(m.mutable_graph()->add_output(), t.name, t.dtype, nullptr);
      ++added;
    }
    for (const auto& o : model_.proto.graph().output())
      if (auto it = outputs.find(o.name()); it != outputs.end())
        *m.mutable_graph()->add_output() = it->second;
    const fs::path path = tmp_ / fmt::format("batch_{}.onnx", bi + 1);
    ODB_ASSIGN_OR_RETURN(const int64_t extra_casts, save_for_backend(k, m, path));
    m.Clear();
    Expected<std::unique_ptr<Session>> session = internal_error("not loaded");
    const fs::path opt_path = tmp_ / fmt::format("batch_{}.optimized.onnx", bi + 1);
    bool counted = false;
    if (plain_nodes >= 0) {
      BackendSpec s = spec;
      s.options["optimized_model"] = opt_path.string();
      auto be = create_backend(s);
      if (be) {
        session = (*be)->load(path);
        counted = session.has_value();
      }
    }
    if (!counted) session = backend.load(path);
    if (!session) return session.status();
    progress(fmt::format("layerwise: running {} with {} extra outputs", rep_.backends[k].backend,
                         added));
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

  /// Runs the tensors of `part` on backend `k` (by name on an observing session, else as extra
  /// outputs) while the reference produces their golden values (GoldenStream), and compares
  /// each tensor as it arrives, so that onnxdbg holds at most the budget's share of golden values
  /// and one of the backend's tensors at a time. The comparisons are recorded, in the part's order,
  /// only when the run succeeds. Returns false when the backend failed (recorded with fail());
  /// errors are the reference's.
  Expected<bool> run_and_compare(size_t k, const BackendSpec& spec, Backend& backend,
                                 Session* observing, const Batch& part, int64_t plain_nodes) {
    std::vector<LayerComparison> cs(part.end - part.begin);
    std::map<std::string_view, size_t> slot;  // tensor name -> index into cs
    uint64_t largest = 0;
    for (size_t i = part.begin; i < part.end; ++i) {
      LayerComparison& c = cs[i - part.begin];
      c.tensor = i;
      c.backend = rep_.backends[k].backend;
      c.tol = opt_.tolerance.for_output(rep_.tensors[i].name);
      slot.emplace(rep_.tensors[i].name, i - part.begin);
      largest = std::max(largest, rep_.tensors[i].bytes);
    }
    // The window: the budget's share for onnxdbg's copies. A backend returns nothing until its
    // run ends, so a smaller one stalls the reference meanwhile; on PP-OCRv4 det 640x640 at
    // 768MiB, `run --layerwise --isolate` took 2.39 s (median of five) with a 64 MiB window,
    // 2.20 s with 128 MiB and 2.17 s with this one (384 MiB), in the same CPU time.
    GoldenStream golden(rep_.tensors, part.begin, part.end, std::max(largest, limit_));
    const TensorSink sink = [&](const std::string& name, Tensor&& value) {
      auto s = slot.find(name);
      if (s == slot.end()) return;  // a graph output outside this part
      LayerComparison& c = cs[s->second];
      std::optional<Tensor> g = golden.take(part.begin + s->second);
      if (!g) {
        c.note = "the backend returned it out of topological order; not compared";
        return;
      }
      c.observed = true;
      c.result = compare_layer(value, *g, c.tol, opt_.error_stat);
      c.computed_in_float32 = fp16_[k] && holds_non_float16_values(value);
    };
    Expected<RunResult> got = internal_error("the backend did not run");
    std::thread backend_side([&] {
      try {
        got = observing ? observing->run_each(inputs_, batch_names(part), sink)
                        : run_with_outputs(k, spec, backend, part, plain_nodes, sink);
      } catch (const std::exception& e) {
        got = internal_error(std::string("while reading the backend's tensors: ") + e.what());
      }
      golden.close();
    });
    Status reference = golden.produce(*src_);
    backend_side.join();
    ODB_RETURN_IF_ERROR(reference);
    if (!got) {
      fail(k, got.status());
      return false;
    }
    LayerwiseBackend& b = rep_.backends[k];
    ++b.batches;
    for (auto& c : cs) {
      if (!c.observed) {
        auto why = got->not_observed.find(rep_.tensors[c.tensor].name);
        if (why != got->not_observed.end())
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
    return true;
  }

  /// Re-runs every node with a failing output alone on its backend, on golden inputs.
  Status isolate(const std::vector<BackendSpec>& specs,
                 const std::vector<std::unique_ptr<Backend>>& backends) {
    const auto& g = model_.proto.graph();
    // Nodes to isolate, per backend, in topological order.
    std::map<size_t, std::set<size_t>> by_node;  // node index -> backends
    for (const auto& c : rep_.comparisons) {
      if (c.pass()) continue;
      by_node[rep_.tensors[c.tensor].node_index].insert(current_backend_name(c.backend));
    }
    if (by_node.empty()) return Status::ok();
    std::map<std::string, uint64_t> bytes_of;
    for (const auto& t : rep_.tensors) bytes_of[t.name] = t.bytes;
    std::set<std::string> initializers;
    for (const auto& t : g.initializer()) initializers.insert(t.name());
    std::map<std::string, size_t> constant_producer;
    for (int i = 0; i < g.node_size(); ++i)
      if (g.node(i).op_type() == "Constant" && g.node(i).domain().empty())
        for (const auto& o : g.node(i).output()) constant_producer[o] = static_cast<size_t>(i);

    // Chunks of nodes whose golden reads and outputs fit the batch limit.
    std::vector<std::vector<size_t>> chunks(1);
    uint64_t chunk_bytes = 0;
    for (const auto& [idx, ks] : by_node) {
      uint64_t need = 0;
      const auto& node = g.node(static_cast<int>(idx));
      for (const auto& n : node_reads(node)) need += bytes_of.count(n) ? bytes_of[n] : 0;
      for (const auto& o : node.output()) need += bytes_of.count(o) ? bytes_of[o] : 0;
      if (!chunks.back().empty() && chunk_bytes + need > limit_) {
        chunks.emplace_back();
        chunk_bytes = 0;
      }
      chunks.back().push_back(idx);
      chunk_bytes += need;
    }
    size_t done = 0;
    for (const auto& chunk : chunks) {
      std::set<std::string> names;
      for (size_t idx : chunk) {
        const auto& node = g.node(static_cast<int>(idx));
        for (const auto& n : node_reads(node))
          if (!initializers.count(n) || inputs_.count(n)) names.insert(n);
        for (const auto& o : node.output())
          if (!o.empty()) names.insert(o);
      }
      progress(fmt::format("layerwise: golden inputs of {} divergent nodes", chunk.size()));
      ODB_ASSIGN_OR_RETURN(TensorMap golden, src_->capture(names));
      TensorMap constants;
      for (auto it = golden.begin(); it != golden.end();) {
        if (constant_producer.count(it->first) && !inputs_.count(it->first)) {
          constants[it->first] = std::move(it->second);
          it = golden.erase(it);
        } else {
          ++it;
        }
      }
      for (size_t k = 0; k < specs.size(); ++k) {
        if (!backends[k] || !rep_.backends[k].ok) continue;
        std::vector<size_t> mine;
        for (size_t idx : chunk)
          if (by_node[idx].count(k)) mine.push_back(idx);
        if (mine.empty()) continue;
        progress(fmt::format("layerwise: isolating {} nodes on {} ({}/{})", mine.size(),
                             specs[k].to_string(), done + mine.size(), by_node.size()));
        isolate_nodes(k, *backends[k], mine, golden, constants);
      }
      done += chunk.size();
      remember_first_node_values(chunk, golden, constants);
    }
    return Status::ok();
  }

  /// Keeps the golden values the earliest node of `chunk` failing on its own reads and writes,
  /// when it comes before the node kept so far, so the repro needs no extra reference run.
  void remember_first_node_values(const std::vector<size_t>& chunk, const TensorMap& golden,
                                  const TensorMap& constants) {
    const auto& g = model_.proto.graph();
    for (size_t idx : chunk) {
      if (first_values_node_ && *first_values_node_ <= idx) return;
      bool own_fail = false;
      for (const auto& c : rep_.comparisons)
        own_fail = own_fail || (c.own_failure() && rep_.tensors[c.tensor].node_index == idx);
      if (!own_fail) continue;
      const auto& node = g.node(static_cast<int>(idx));
      std::vector<std::string> names = node_reads(node);
      names.insert(names.end(), node.output().begin(), node.output().end());
      rep_.first_node_values.clear();
      for (const auto& n : names) {
        if (auto it = golden.find(n); it != golden.end()) rep_.first_node_values[n] = it->second;
        if (auto it = constants.find(n); it != constants.end())
          rep_.first_node_values[n] = it->second;
        if (auto it = inputs_.find(n); it != inputs_.end()) rep_.first_node_values[n] = it->second;
      }
      first_values_node_ = idx;
      return;
    }
  }

  size_t current_backend_name(const std::string& name) const {
    for (size_t k = 0; k < rep_.backends.size(); ++k)
      if (rep_.backends[k].backend == name) return k;
    return 0;
  }

  /// All of `nodes` in one model of disjoint single-node graphs; node by node when that fails.
  void isolate_nodes(size_t k, Backend& backend, const std::vector<size_t>& nodes,
                     TensorMap& golden, const TensorMap& constants) {
    Status st = isolate_together(k, backend, nodes, golden, constants);
    if (st.is_ok()) return;
    if (nodes.size() == 1) {
      mark_isolation_error(k, nodes[0], st);
      return;
    }
    for (size_t idx : nodes) {
      Status one = isolate_together(k, backend, {idx}, golden, constants);
      if (!one.is_ok()) mark_isolation_error(k, idx, one);
    }
  }

  void mark_isolation_error(size_t k, size_t node_index, const Status& st) {
    for (auto& c : rep_.comparisons)
      if (c.backend == rep_.backends[k].backend && !c.pass() &&
          rep_.tensors[c.tensor].node_index == node_index)
        c.isolate_error = st.to_string();
  }

  Status isolate_together(size_t k, Backend& backend, const std::vector<size_t>& nodes,
                          TensorMap& golden, const TensorMap& constants) {
    const std::string prefix = "onnxdbg_isolated/";
    auto rename = [&](const std::string& n) { return prefix + n; };
    // OpenCV's importer wants every graph output's shape; ONNX Runtime infers them itself.
    const bool shapes = observes_by_name(BackendSpec{backend.name(), {}});
    ODB_ASSIGN_OR_RETURN(onnx::ModelProto m,
                         nodes_model(model_, nodes, golden, constants, rename, shapes));
    const fs::path path = tmp_ / "isolated.onnx";
    if (auto saved = save_for_backend(k, m, path); !saved) return saved.status();
    auto session = backend.load(path);
    if (!session) return session.status();
    progress(fmt::format("layerwise: running {} isolated nodes on {}", nodes.size(),
                         rep_.backends[k].backend));
    // The golden inputs are lent to the run (moved out and back), not copied.
    TensorMap feeds;
    for (const auto& in : m.graph().input()) feeds[in.name()] = std::move(golden.at(in.name()));
    auto r = (*session)->run(feeds);
    for (auto& [name, t] : feeds) golden.at(name) = std::move(t);
    feeds.clear();
    if (!r) return r.status();
    const std::set<size_t> wanted(nodes.begin(), nodes.end());
    // Intermediate tensors that overflowed on this float16 backend (golden values beyond
    // float16's range, and outside tolerance here): as golden inputs they are +-inf in float16
    // too, so a node reading one inherits the overflow. (A backend may compute in float32 where
    // it lacks a float16 kernel; the tensor then did not overflow there, and counts as usual.)
    std::set<size_t> beyond_fp16;
    if (fp16_[k]) {
      std::set<std::string_view> overflowed;
      for (const auto& c : rep_.comparisons) {
        const LayerTensor& t = rep_.tensors[c.tensor];
        if (c.backend == rep_.backends[k].backend && !c.pass() && is_floating(t.dtype) &&
            t.golden_max_abs > kFloat16Max)
          overflowed.insert(t.name);
      }
      for (size_t idx : nodes)
        for (const auto& n : node_reads(model_.proto.graph().node(static_cast<int>(idx))))
          if (overflowed.count(n)) beyond_fp16.insert(idx);
    }
    for (auto& c : rep_.comparisons) {
      if (c.backend != rep_.backends[k].backend || c.pass()) continue;
      const LayerTensor& t = rep_.tensors[c.tensor];
      if (!wanted.count(t.node_index)) continue;
      c.isolated = true;
      auto a = r->outputs.find(rename(t.name));
      auto want = golden.find(t.name);
      if (a == r->outputs.end() || want == golden.end()) {
        c.isolate_error = "the isolated node did not return this output";
        continue;
      }
      c.own = compare_layer(a->second, want->second, c.tol, opt_.error_stat);
      c.input_beyond_fp16 = beyond_fp16.count(t.node_index) > 0;
      c.own_computed_in_float32 = fp16_[k] && holds_non_float16_values(a->second);
    }
    return Status::ok();
  }

  void pick_first_divergences() {
    for (size_t k = 0; k < rep_.backends.size(); ++k) {
      LayerwiseBackend& b = rep_.backends[k];
      for (const auto& c : rep_.comparisons) {
        if (c.backend != b.backend || c.pass()) continue;
        const bool counts = opt_.isolate ? c.own_failure() : true;
        if (!counts) continue;
        FirstDivergence f;
        f.tensor = c.tensor;
        f.backend = b.backend;
        if (c.own) f.own_error = c.own->max_abs_error;
        f.basis = opt_.isolate ? "own" : "total";
        f.precision = fp16_[k] ? "fp16" : "fp32";
        b.first = f;
        break;
      }
      if (b.first && (!rep_.first || b.first->tensor < rep_.first->tensor)) rep_.first = b.first;
      if (opt_.isolate && !b.first && b.failed > 0) {
        b.notes.push_back(
            "no node exceeds the tolerance on its own: the error builds up over several nodes "
            "(see the worst tensors)");
      }
    }
  }

  const LoadedModel& model_;
  const TensorMap& inputs_;
  const LayerwiseOptions& opt_;
  LayerwiseReport& rep_;
  uint64_t limit_ = 0;
  fs::path tmp_;
  GoldenSource* src_ = nullptr;
  std::optional<size_t> first_values_node_;  // whose values rep_.first_node_values holds
  std::vector<bool> fp16_;                   // per backend: precision=fp16
  std::vector<int64_t> plain_casts_;         // per fp16 backend: Casts in the whole model
  std::vector<fs::path> load_paths_;         // per backend: the whole model it loads
};

}  // namespace

Expected<uint64_t> parse_memory_size(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  const std::string num = text.substr(0, i);
  std::string unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  char* end = nullptr;
  const double v = num.empty() ? -1 : std::strtod(num.c_str(), &end);
  static const std::map<std::string, double> units = {{"", 1},
                                                      {"b", 1},
                                                      {"k", 1e3},
                                                      {"kb", 1e3},
                                                      {"m", 1e6},
                                                      {"mb", 1e6},
                                                      {"g", 1e9},
                                                      {"gb", 1e9},
                                                      {"t", 1e12},
                                                      {"tb", 1e12},
                                                      {"kib", 1024.0},
                                                      {"mib", 1048576.0},
                                                      {"gib", 1073741824.0},
                                                      {"tib", 1099511627776.0}};
  auto u = units.find(unit);
  if (num.empty() || !end || *end != '\0' || u == units.end()) {
    return invalid_argument(fmt::format(
        "'{}' is not a memory size; write e.g. 2GiB, 512MiB, 1.5GB or a number of bytes", text));
  }
  const double bytes = v * u->second;
  if (!(bytes >= 1) || bytes > std::ldexp(1.0, 60)) {
    return invalid_argument(
        fmt::format("memory size '{}' must be at least 1 byte and at most 1 EiB", text));
  }
  return static_cast<uint64_t>(bytes);
}

std::string memory_size_string(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.3g} {}", v, units[u]);
}

Expected<LayerwiseReport> run_layerwise(const LoadedModel& model,
                                        const std::vector<BackendSpec>& backends,
                                        const TensorMap& inputs, const LayerwiseOptions& options) {
  LayerwiseReport rep;
  Runner runner(model, inputs, options, rep);
  ODB_RETURN_IF_ERROR(runner.run(backends));
  return rep;
}

Expected<onnx::ModelProto> single_node_model(const LoadedModel& model, size_t node_index,
                                             const TensorMap& constants,
                                             const std::map<std::string, Tensor>& values) {
  return nodes_model(
      model, {node_index}, values, constants, [](const std::string& n) { return n; }, true);
}

Status save_layerwise_repro(const LoadedModel& model, const TensorMap& inputs,
                            LayerwiseReport& report, const fs::path& dir,
                            const reference::InterpreterOptions& options) {
  if (!report.first) return invalid_argument("no divergent node to write a repro for");
  const LayerTensor& t = report.tensors[report.first->tensor];
  const auto& g = model.proto.graph();
  const auto& node = g.node(static_cast<int>(t.node_index));
  std::error_code ec;
  if (fs::exists(dir, ec) &&
      !(fs::exists(dir / "model.onnx", ec) && fs::exists(dir / "test_data_set_0", ec))) {
    return invalid_argument(fmt::format(
        "'{}' exists and is not an earlier onnxdbg repro folder; give another --save-repro",
        dir.string()));
  }
  std::set<std::string> initializers, constants_made;
  for (const auto& i : g.initializer()) initializers.insert(i.name());
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.domain().empty())
      for (const auto& o : n.output()) constants_made.insert(o);
  std::set<std::string> names;
  for (const auto& n : node_reads(node))
    if (!initializers.count(n) || inputs.count(n)) names.insert(n);
  for (const auto& o : node.output())
    if (!o.empty()) names.insert(o);
  bool have = true;
  for (const auto& n : names) have = have && report.first_node_values.count(n);
  TensorMap golden;
  if (have) {
    for (const auto& n : names) golden[n] = report.first_node_values.at(n);
  } else {
    ODB_ASSIGN_OR_RETURN(GoldenSource src, GoldenSource::create(model, inputs, options));
    ODB_ASSIGN_OR_RETURN(golden, src.capture(names));
  }
  TensorMap constants;
  for (auto it = golden.begin(); it != golden.end();) {
    if (constants_made.count(it->first) && !inputs.count(it->first)) {
      constants[it->first] = std::move(it->second);
      it = golden.erase(it);
    } else {
      ++it;
    }
  }
  ODB_ASSIGN_OR_RETURN(onnx::ModelProto m,
                       single_node_model(model, t.node_index, constants, golden));
  if (report.first->precision == "fp16")
    if (auto converted = convert_model_to_fp16(m, model.base_dir); !converted)
      return converted.status();
  TensorMap in, out;
  for (const auto& v : m.graph().input()) in[v.name()] = golden.at(v.name());
  for (const auto& v : m.graph().output()) out[v.name()] = golden.at(v.name());

  const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  fs::create_directories(parent, ec);
  std::string templ = (parent / ".onnxdbg-repro-XXXXXX").string();
  if (!mkdtemp(templ.data()))
    return invalid_argument(fmt::format("cannot write into '{}'", parent.string()));
  const fs::path staging = templ;
  Status st = save_model(m, staging / "model.onnx");
  if (st.is_ok()) st = save_test_data(staging / "test_data_set_0", m.graph(), in, out);
  if (st.is_ok()) {
    fs::remove_all(dir, ec);
    fs::rename(staging, dir, ec);
    if (ec)
      st = invalid_argument(fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
  }
  if (!st.is_ok()) {
    fs::remove_all(staging, ec);
    return st;
  }
  report.repro_dir = dir;
  return Status::ok();
}

}  // namespace onnxdbg
