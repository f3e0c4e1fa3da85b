// Isolation in the layerwise pass (see pass.h): every node with a failing output re-run alone
// on its backend, on golden inputs (loaded ones where given, else from the reference), so that
// its own error is told apart from the error it inherited from upstream.
#include <fmt/format.h>

#include "comparator/precision.h"
#include "layerwise/golden_stream.h"
#include "layerwise/node_models.h"
#include "layerwise/pass.h"

namespace onnxdbg::layerwise_detail {

namespace fs = std::filesystem;

namespace {

/// The isolated nodes' outputs are renamed so that no output of the model of disjoint
/// single-node graphs is also one of its inputs.
const char kIsolatedPrefix[] = "onnxdbg_isolated/";

std::string isolated_name(const std::string& n) { return kIsolatedPrefix + n; }

}  // namespace

/// Re-runs every node with a failing output alone on its backend, on golden inputs.
Status Pass::isolate(const std::vector<BackendSpec>& specs,
                     const std::vector<std::unique_ptr<Backend>>& backends) {
  // Nodes to isolate, per backend, in topological order.
  const std::map<size_t, std::set<size_t>> by_node = failing_nodes();
  if (by_node.empty()) return Status::ok();
  size_t done = 0;
  for (const auto& chunk : isolation_chunks(by_node))
    ODB_RETURN_IF_ERROR(isolate_chunk(specs, backends, chunk, by_node, &done));
  return Status::ok();
}

std::map<size_t, std::set<size_t>> Pass::failing_nodes() const {
  std::map<size_t, std::set<size_t>> by_node;  // node index -> backends
  for (const auto& c : rep_.comparisons) {
    if (c.pass()) continue;
    by_node[rep_.tensors[c.tensor].node_index].insert(backend_index(c.backend));
  }
  return by_node;
}

std::vector<std::vector<size_t>> Pass::isolation_chunks(
    const std::map<size_t, std::set<size_t>>& by_node) const {
  const auto& g = model_.proto.graph();
  std::map<std::string, uint64_t> bytes_of;
  for (const auto& t : rep_.tensors) bytes_of[t.name] = t.bytes;
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
  return chunks;
}

Status Pass::isolate_chunk(const std::vector<BackendSpec>& specs,
                           const std::vector<std::unique_ptr<Backend>>& backends,
                           const std::vector<size_t>& chunk,
                           const std::map<size_t, std::set<size_t>>& by_node, size_t* done) {
  const auto& g = model_.proto.graph();
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  std::set<std::string> names;
  for (size_t idx : chunk)
    add_golden_names(g.node(static_cast<int>(idx)), initializers, inputs_, &names);
  progress(fmt::format("layerwise: golden inputs of {} divergent nodes", chunk.size()));
  ODB_ASSIGN_OR_RETURN(TensorMap golden, src_->capture(names));
  TensorMap constants = take_constants(golden, constant_node_outputs(g), inputs_);
  for (size_t k = 0; k < specs.size(); ++k) {
    if (!backends[k] || !rep_.backends[k].ok) continue;
    std::vector<size_t> mine;
    for (size_t idx : chunk)
      if (by_node.at(idx).count(k)) mine.push_back(idx);
    if (mine.empty()) continue;
    progress(fmt::format("layerwise: isolating {} nodes on {} ({}/{})", mine.size(),
                         specs[k].to_string(), *done + mine.size(), by_node.size()));
    isolate_nodes(k, *backends[k], mine, golden, constants);
  }
  *done += chunk.size();
  remember_first_node_values(chunk, golden, constants);
  return Status::ok();
}

/// Keeps the golden values the earliest node of `chunk` failing on its own reads and writes,
/// when it comes before the node kept so far, so the repro needs no extra reference run.
void Pass::remember_first_node_values(const std::vector<size_t>& chunk, const TensorMap& golden,
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

size_t Pass::backend_index(const std::string& name) const {
  for (size_t k = 0; k < rep_.backends.size(); ++k)
    if (rep_.backends[k].backend == name) return k;
  return 0;
}

/// All of `nodes` in one model of disjoint single-node graphs; node by node when that fails.
void Pass::isolate_nodes(size_t k, Backend& backend, const std::vector<size_t>& nodes,
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

void Pass::mark_isolation_error(size_t k, size_t node_index, const Status& st) {
  for (auto& c : rep_.comparisons)
    if (c.backend == rep_.backends[k].backend && !c.pass() &&
        rep_.tensors[c.tensor].node_index == node_index)
      c.isolate_error = st.to_string();
}

/// `nodes` in one model on `backend`, fed golden values; their failing outputs' own errors go
/// into the comparisons (record_isolated). Errors: the model's building, loading or run.
Status Pass::isolate_together(size_t k, Backend& backend, const std::vector<size_t>& nodes,
                              TensorMap& golden, const TensorMap& constants) {
  // OpenCV's importer wants every graph output's shape; ONNX Runtime infers them itself.
  const bool shapes = observes_by_name(BackendSpec{backend.name(), {}});
  ODB_ASSIGN_OR_RETURN(onnx::ModelProto m,
                       nodes_model(model_, nodes, golden, constants, isolated_name, shapes));
  const fs::path path = tmp_ / "isolated.onnx";
  if (auto saved = save_for_backend(k, m, path); !saved) return saved.status();
  auto session = backend.load(path, model_.base_dir);
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
  record_isolated(k, nodes, *r, golden);
  return Status::ok();
}

void Pass::record_isolated(size_t k, const std::vector<size_t>& nodes, const SessionRunResult& r,
                           const TensorMap& golden) {
  const std::set<size_t> wanted(nodes.begin(), nodes.end());
  const std::set<size_t> beyond_fp16 =
      fp16_[k] ? nodes_reading_overflow(k, nodes) : std::set<size_t>{};
  for (auto& c : rep_.comparisons) {
    if (c.backend != rep_.backends[k].backend || c.pass()) continue;
    const LayerTensor& t = rep_.tensors[c.tensor];
    if (!wanted.count(t.node_index)) continue;
    c.isolated = true;
    auto a = r.outputs.find(isolated_name(t.name));
    auto want = golden.find(t.name);
    if (a == r.outputs.end() || want == golden.end()) {
      c.isolate_error = "the isolated node did not return this output";
      continue;
    }
    c.own = compare_layer(a->second, want->second, c.tol, opt_.error_stat);
    mark_quantized(*c.own, t.dtype, t.quant_scale);
    c.input_beyond_fp16 = beyond_fp16.count(t.node_index) > 0;
    c.own_computed_in_float32 = fp16_[k] && holds_non_float16_values(a->second);
  }
}

}  // namespace onnxdbg::layerwise_detail
