// The layerwise pass step by step (see pass.h): a first reference run (or the loaded golden
// values) sizes the tensors, each backend then compares them batch by batch beside the reference,
// divergent nodes are isolated, and the first divergence of each backend is picked. run_layerwise
// (layerwise.h) runs it.
#include "layerwise/pass.h"

#include <fmt/format.h>
#include <malloc.h>
#include <stdlib.h>

#include <algorithm>
#include <system_error>

#include "backends/isolated.h"
#include "comparator/precision.h"
#include "core/temp_dir.h"
#include "layerwise/golden_store.h"
#include "layerwise/golden_stream.h"
#include "layerwise/layer_tensors.h"
#include "layerwise/node_models.h"

namespace onnxdbg {
namespace layerwise_detail {
namespace {

namespace fs = std::filesystem;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A backend's side waits for the reference beside it, so its run timeout must cover the
/// reference's run too: unless given, the default plus four times the first reference run.
void add_run_timeouts(std::vector<BackendSpec>& run_specs, double reference_seconds) {
  for (auto& s : run_specs)
    if (is_isolated_backend(s.name) && !s.options.count("timeout"))
      s.options["timeout"] =
          fmt::format("{:.0f}", IsolationOptions{}.run_timeout_seconds + 4 * reference_seconds + 1);
}

}  // namespace

Pass::~Pass() = default;

Status Pass::collect() {
  const auto start = Clock::now();
  rep_.memory_budget = opt_.memory_budget;
  limit_ = std::max<uint64_t>(1, opt_.memory_budget / kLayerwiseCopies);
  ODB_ASSIGN_OR_RETURN(TempDir tmp, TempDir::create("onnxdbg-layerwise-", opt_.temp_dir));
  tmp_dir_ = std::make_unique<TempDir>(std::move(tmp));
  tmp_ = tmp_dir_->path();
  whole_path_ = model_.path;
  if (copy_) {
    // The model as run (Ifs replaced by their taken branches, nodes sorted: OpenCV's importer
    // refuses nodes listed before their inputs' producers), not the file.
    whole_path_ = tmp_ / "model_as_run.onnx";
    ODB_RETURN_IF_ERROR(save_model(model_.proto, whole_path_));
  }
  ODB_ASSIGN_OR_RETURN(GoldenSource src,
                       GoldenSource::create(model_, inputs_, opt_.reference, opt_.golden));
  src_ = std::make_unique<GoldenSource>(std::move(src));
  if (opt_.golden) rep_.golden_source = opt_.golden_source;

  progress(opt_.golden ? "layerwise: the loaded golden values (which tensors, how large)"
                       : "layerwise: reference run (every golden value, kept on disk)");
  std::unique_ptr<GoldenStore> store = open_store();
  ODB_RETURN_IF_ERROR(collect_layer_tensors(*src_, limit_, opt_.memory_budget, &rep_, store.get()));
  if (store) {
    if (Status sealed = store->seal(); !sealed.is_ok()) {
      rep_.notes.push_back(sealed.message() + ": the reference ran again beside each backend run");
      store.reset();
    }
  }
  if (store) {
    rep_.spilled_bytes = store->spilled_bytes();
    if (!store->stop_reason().empty())
      rep_.notes.push_back(fmt::format(
          "{}: the reference ran again beside each backend run for the {} tensors after it",
          store->stop_reason(), rep_.tensors.size() - store->covered()));
    store_ = std::move(store);
    src_->use_store(store_.get());
  }
  collect_seconds_ = seconds_since(start);
  // The reference's working set is free now; give its pages back before the batches (glibc
  // keeps freed heap memory resident otherwise).
  malloc_trim(0);
  return Status::ok();
}

Expected<TensorMap> Pass::golden_copies(const std::set<std::string>& names) {
  ODB_ASSIGN_OR_RETURN(TensorMap views, src_->capture(names));
  TensorMap copies;
  // Values from the spill file are views into it; a copy of a Tensor owns its bytes.
  for (const auto& [name, t] : views) copies.emplace(name, Tensor(t));
  return copies;
}

Status Pass::compare(const std::vector<BackendSpec>& specs) {
  const auto start = Clock::now();
  // What ran between the two (the output comparison's other backends) freed memory too.
  malloc_trim(0);
  for (const auto& spec : specs) {
    LayerwiseBackend b;
    b.backend = spec.to_string();
    rep_.backends.push_back(std::move(b));
  }
  std::vector<BackendSpec> run_specs = backend_run_specs(specs);
  ODB_RETURN_IF_ERROR(prepare_fp16(specs));
  add_run_timeouts(run_specs, collect_seconds_);
  for (size_t k = 0; k < specs.size(); ++k) segments_.push_back(plan_segments(k, specs[k]));
  std::vector<std::future<int64_t>> plain_counts = start_plain_node_counts(specs, run_specs);

  OpenBackends open = open_backends(specs, run_specs, plain_counts);
  ODB_RETURN_IF_ERROR(compare_batches(specs, run_specs, open));
  if (opt_.isolate) ODB_RETURN_IF_ERROR(isolate(specs, open.backends));
  finish(specs);
  // The pass's time is collect()'s and this one's (not what ran between the two).
  rep_.seconds = collect_seconds_ + seconds_since(start);
  return Status::ok();
}

Expected<std::unique_ptr<GoldenStore>> Pass::new_spill_file(bool golden) const {
  if (golden && opt_.max_spill_bytes != kSpillFreeDisk)
    return GoldenStore::create(tmp_, opt_.max_spill_bytes, "LayerwiseOptions::max_spill_bytes");
  // Unknown free space: a full disk stops the file when it comes.
  const std::optional<uint64_t> free = GoldenStore::free_disk_bytes(tmp_);
  return GoldenStore::create(
      tmp_, free.value_or(UINT64_MAX),
      fmt::format("the free space there less {}", memory_size_string(kSpillDiskReserve)));
}

std::unique_ptr<GoldenStore> Pass::open_store() {
  if (opt_.golden) return nullptr;  // the loaded values are in memory already
  auto store = new_spill_file(/*golden=*/true);
  if (!store) {
    rep_.notes.push_back(store.status().message() +
                         ": the reference ran again beside each backend run");
    return nullptr;
  }
  return std::move(*store);
}

void Pass::progress(const std::string& s) const {
  if (opt_.progress) opt_.progress(s);
}

void Pass::fail(size_t k, const Status& st) {
  rep_.backends[k].ok = false;
  rep_.backends[k].error = st.to_string();
}

std::vector<BackendSpec> Pass::backend_run_specs(const std::vector<BackendSpec>& specs) {
  // ONNX Runtime without its arena: each batch is a new session in the same worker, which then
  // reuses the memory the previous one freed instead of faulting in fresh arena regions.
  // precision=fp16 is ours, not the backend's: it gets the models converted (prepare_fp16,
  // save_for_backend).
  std::vector<BackendSpec> run_specs = specs;
  for (auto& s : run_specs) {
    s = without_precision(s);
    if (backend_has_option(s.name, "arena")) s.options.try_emplace("arena", "off");
  }
  return run_specs;
}

std::vector<std::future<int64_t>> Pass::start_plain_node_counts(
    const std::vector<BackendSpec>& specs, const std::vector<BackendSpec>& run_specs) {
  // The optimized graph of the unmodified model, to see whether extra outputs change it. The
  // task gets its own copy of the spec: run() adds the run timeout to run_specs meanwhile.
  // Not for a backend run by segments: no segment is the whole model.
  std::vector<std::future<int64_t>> counts(specs.size());
  for (size_t k = 0; k < specs.size(); ++k)
    if (backend_has_option(specs[k].name, "optimized_model") && rep_.backends[k].ok &&
        !segments_[k].store)
      try {
        counts[k] = std::async(std::launch::async, [this, spec = run_specs[k], k] {
          return optimized_node_count(spec, load_paths_[k], fmt::format("plain_{}", k));
        });
      } catch (const std::system_error&) {
        // No thread to be had (a tight data limit): the count, and the note it feeds, are skipped.
      }
  return counts;
}

OpenBackends Pass::open_backends(const std::vector<BackendSpec>& specs,
                                 const std::vector<BackendSpec>& run_specs,
                                 std::vector<std::future<int64_t>>& plain_counts) {
  OpenBackends open;
  open.backends.resize(specs.size());
  open.observing.resize(specs.size());
  open.plain_nodes.assign(specs.size(), -1);
  for (size_t k = 0; k < specs.size(); ++k) {
    if (plain_counts[k].valid()) open.plain_nodes[k] = plain_counts[k].get();
    if (!rep_.backends[k].ok) continue;
    auto be = create_backend(run_specs[k]);
    if (!be) {
      fail(k, be.status());
      continue;
    }
    open.backends[k] = std::move(*be);
    if (observes_by_name(specs[k])) {
      progress("layerwise: loading the model on " + specs[k].to_string());
      auto s = open.backends[k]->load(load_paths_[k], model_.base_dir);
      if (!s) {
        fail(k, s.status());
        continue;
      }
      open.observing[k] = std::move(*s);
    }
  }
  return open;
}

Status Pass::compare_batches(const std::vector<BackendSpec>& specs,
                             const std::vector<BackendSpec>& run_specs, OpenBackends& open) {
  for (size_t k = 0; k < specs.size(); ++k) {
    if (!rep_.backends[k].ok) continue;
    const std::vector<Batch> batches = backend_batches(specs[k]);
    CarriedValues& carried = segments_[k];
    for (size_t bi = 0; bi < batches.size() && rep_.backends[k].ok; ++bi) {
      if (opt_.cancelled && opt_.cancelled())
        return cancelled("layerwise pass cancelled before batch " + std::to_string(bi + 1) +
                         " on " + specs[k].to_string());
      const Batch& batch = batches[bi];
      progress(fmt::format("layerwise: {} batch {}/{} ({} tensors, {})", specs[k].to_string(),
                           bi + 1, batches.size(), batch.end - batch.begin,
                           memory_size_string(batch.bytes)));
      Expected<bool> ran =
          run_and_compare(k, run_specs[k], *open.backends[k], open.observing[k].get(), batch,
                          open.plain_nodes[k], carried.store ? &carried : nullptr);
      if (!ran) return ran.status();  // the reference failed
      if (!*ran) break;               // the backend failed (recorded)
    }
    note_segments(k, batches.size(), carried);
  }
  return Status::ok();
}

void Pass::note_segments(size_t k, size_t batches, const CarriedValues& carried) {
  if (carried.segments > 0)
    rep_.backends[k].notes.push_back(fmt::format(
        "{} of {} batches ran as segments: each batch's nodes alone, fed the backend's own "
        "values of the {} tensors they read from earlier segments, so each node ran once and "
        "every compared tensor was a graph output where it was computed",
        carried.segments, batches, carried.needed.size()));
  if (!carried.fallback.empty())
    rep_.backends[k].notes.push_back(
        carried.fallback + (carried.segments > 0
                                ? "; the later batches ran the whole model with extra outputs"
                                : "; every batch ran the whole model with extra outputs"));
}

void Pass::finish(const std::vector<BackendSpec>& specs) {
  for (size_t k = 0; k < specs.size(); ++k) note_float32_tensors(k, specs);
  mark_failed_inputs();
  pick_first_divergences();
  keep_first_node_values();
  rep_.reference_runs = src_->runs();
  rep_.peak_rss_bytes = peak_rss_bytes();
}

void Pass::keep_first_node_values() {
  if (!rep_.first) return;
  const size_t idx = rep_.tensors[rep_.first->tensor].node_index;
  if (first_values_node_ == idx) return;  // isolation kept them
  const auto& g = model_.proto.graph();
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  std::set<std::string> names;
  add_golden_names(g.node(static_cast<int>(idx)), initializers, inputs_, &names);
  TensorMap values;
  for (const auto& n : names) {
    if (auto in = inputs_.find(n); in != inputs_.end()) {
      values[n] = in->second;
    } else if (auto gv = opt_.golden ? opt_.golden->find(n) : TensorMap::const_iterator();
               opt_.golden && gv != opt_.golden->end()) {
      values[n] = gv->second;
    } else if (std::optional<Tensor> kept = store_ ? store_->find(n) : std::nullopt) {
      values[n] = *kept;  // a copy: the store goes with the pass
    } else {
      return;  // the repro runs the reference for it, as before
    }
  }
  rep_.first_node_values = std::move(values);
  first_values_node_ = idx;
}

void Pass::mark_failed_inputs() {
  std::map<std::pair<std::string, std::string>, bool> failed;  // (backend, tensor) -> failed
  for (const auto& c : rep_.comparisons)
    if (c.observed) failed[{c.backend, rep_.tensors[c.tensor].name}] = !c.result.pass;
  const auto& g = model_.proto.graph();
  // Node outputs with no golden value (a loaded file lacks them): never compared, so whether
  // they carry an error upstream is unknown.
  std::set<std::string> compared;
  for (const auto& t : rep_.tensors) compared.insert(t.name);
  const std::set<std::string> constants = constant_node_outputs(g);
  std::set<std::string> unknown;
  for (const auto& node : g.node())
    for (const auto& o : node.output())
      if (!o.empty() && !compared.count(o) && !constants.count(o)) unknown.insert(o);
  for (auto& c : rep_.comparisons) {
    const size_t n = rep_.tensors[c.tensor].node_index;
    if (n >= static_cast<size_t>(g.node_size())) continue;
    for (const auto& in : g.node(static_cast<int>(n)).input()) {
      auto it = failed.find({c.backend, in});
      if ((it != failed.end() && it->second) || unknown.count(in)) c.input_failed = true;
    }
  }
}

void Pass::pick_first_divergences() {
  for (size_t k = 0; k < rep_.backends.size(); ++k) {
    LayerwiseBackend& b = rep_.backends[k];
    for (const auto& c : rep_.comparisons) {
      if (c.backend != b.backend || c.pass()) continue;
      // With isolation, the divergence starts at a node failing alone, or at one failing only in
      // context whose inputs all agree.
      const bool counts = opt_.isolate ? c.own_failure() || c.context_failure() : true;
      if (!counts) continue;
      FirstDivergence f;
      f.tensor = c.tensor;
      f.backend = b.backend;
      if (c.own) f.own_error = c.own->max_abs_error;
      f.basis = !opt_.isolate ? "total" : c.own_failure() ? "own" : "context";
      f.precision = fp16_[k] ? "fp16" : "fp32";
      b.first = f;
      break;
    }
    if (b.first && (!rep_.first || b.first->tensor < rep_.first->tensor)) rep_.first = b.first;
    if (opt_.isolate && !b.first && b.failed > 0) {
      b.notes.emplace_back(
          "no node exceeds the tolerance on its own: the error builds up over several nodes "
          "(see the worst tensors)");
    }
  }
}

}  // namespace layerwise_detail

std::string golden_label(const std::string& golden_source) {
  if (golden_source == "reference") return golden_source;
  if (golden_source == "given") return "the given golden values";
  return "'" + golden_source + "'";
}

Expected<LayerwiseReport> run_layerwise(const LoadedModel& model,
                                        const std::vector<BackendSpec>& backends,
                                        const TensorMap& inputs, const LayerwiseOptions& options) {
  ODB_ASSIGN_OR_RETURN(std::unique_ptr<PreparedLayerwise> prepared,
                       prepare_layerwise(model, inputs, options));
  return run_layerwise(*prepared, backends);
}

// What a prepared pass holds: its options, its report so far, the model as run and the Pass,
// which refers to all three (so the Impl stays where it was allocated).
struct PreparedLayerwise::Impl {
  LayerwiseOptions options;
  LayerwiseReport report;
  std::optional<LoadedModel> copy;
  std::unique_ptr<layerwise_detail::Pass> pass;
  std::set<std::string> output_names;
  bool finished = false;
};

PreparedLayerwise::PreparedLayerwise(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedLayerwise::~PreparedLayerwise() = default;

Expected<TensorMap> PreparedLayerwise::graph_outputs() {
  return impl_->pass->golden_copies(impl_->output_names);
}

double PreparedLayerwise::seconds() const { return impl_->pass->collect_seconds(); }

Expected<std::unique_ptr<PreparedLayerwise>> prepare_layerwise(const LoadedModel& model,
                                                               const TensorMap& inputs,
                                                               const LayerwiseOptions& options) {
  auto impl = std::make_unique<PreparedLayerwise::Impl>();
  impl->options = options;
  const LoadedModel& as_run =
      layerwise_detail::as_run(model, inputs, options.reference, impl->copy, &impl->report);
  for (const auto& o : model.proto.graph().output()) impl->output_names.insert(o.name());
  impl->pass = std::make_unique<layerwise_detail::Pass>(as_run, inputs, impl->options, impl->report,
                                                        impl->copy.has_value());
  ODB_RETURN_IF_ERROR(impl->pass->collect());
  return std::unique_ptr<PreparedLayerwise>(new PreparedLayerwise(std::move(impl)));
}

Expected<LayerwiseReport> run_layerwise(PreparedLayerwise& prepared,
                                        const std::vector<BackendSpec>& backends) {
  PreparedLayerwise::Impl& impl = *prepared.impl_;
  if (impl.finished) return invalid_argument("this layerwise pass has run already");
  impl.finished = true;
  ODB_RETURN_IF_ERROR(impl.pass->compare(backends));
  return std::move(impl.report);
}

}  // namespace onnxdbg
