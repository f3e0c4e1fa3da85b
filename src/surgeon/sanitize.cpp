// `surgeon sanitize`: input-shape overrides, then toposort, constant folding and cleanup as asked,
// with the one-line summary the CLI prints.
#include <chrono>

#include "model/shape_inference.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {

Status override_input_shapes(onnx::ModelProto& model, const std::map<std::string, Shape>& shapes) {
  auto* g = model.mutable_graph();
  std::unordered_set<std::string> inits;
  for (const auto& t : g->initializer()) inits.insert(t.name());
  for (const auto& [name, shape] : shapes) {
    onnx::ValueInfoProto* vi = nullptr;
    for (auto& in : *g->mutable_input())
      if (in.name() == name && !inits.count(name)) vi = &in;
    if (!vi) {
      std::string list;
      for (const auto& in : g->input())
        if (!inits.count(in.name())) list += (list.empty() ? "'" : ", '") + in.name() + "'";
      return invalid_argument("--override-input-shapes names '" + name +
                              "', which is not an input of the model (inputs: " + list + ")");
    }
    if (!vi->type().has_tensor_type())
      return invalid_argument("input '" + name + "' is not a tensor; its shape cannot be set");
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    if (tt->has_shape()) {
      const auto& old = tt->shape();
      if (old.dim_size() != static_cast<int>(shape.size()))
        return invalid_argument("input '" + name + "' has rank " + std::to_string(old.dim_size()) +
                                " but --override-input-shapes gives " + shape_to_string(shape) +
                                " (rank " + std::to_string(shape.size()) + ")");
      for (int d = 0; d < old.dim_size(); ++d)
        if (old.dim(d).has_dim_value() && old.dim(d).dim_value() != shape[static_cast<size_t>(d)])
          return invalid_argument("input '" + name + "' has static dim " + std::to_string(d) +
                                  " = " + std::to_string(old.dim(d).dim_value()) +
                                  " but --override-input-shapes gives " +
                                  std::to_string(shape[static_cast<size_t>(d)]));
    }
    for (auto d : shape)
      if (d < 0) return invalid_argument("input '" + name + "': dims must be non-negative");
    auto* s = tt->mutable_shape();
    s->clear_dim();
    for (auto d : shape) s->add_dim()->set_dim_value(d);
  }
  refresh_value_info(model, /*update_outputs=*/true);
  return Status::ok();
}

std::string SanitizeReport::summary() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : "; ") + part; };
  if (!overridden_inputs.empty()) {
    std::string list;
    for (const auto& i : overridden_inputs) list += (list.empty() ? "" : ", ") + i;
    add("set input shapes " + list);
  }
  if (moved_nodes)
    add(*moved_nodes ? "reordered " + std::to_string(*moved_nodes) + " nodes"
                     : "nodes already in topological order");
  if (fold)
    add("folded " + std::to_string(fold->nodes_folded) + " node" +
        (fold->nodes_folded == 1 ? "" : "s") +
        (fold->subgraph_nodes_folded
             ? " (" + std::to_string(fold->subgraph_nodes_folded) + " inside subgraphs)"
             : "") +
        " into " + std::to_string(fold->initializers_added) + " initializer" +
        (fold->initializers_added == 1 ? "" : "s") +
        (fold->skipped_large
             ? " (" + std::to_string(fold->skipped_large) + " kept: over the size limit)"
             : ""));
  if (cleanup)
    add("removed " + std::to_string(cleanup->dead_nodes) + " dead node" +
        (cleanup->dead_nodes == 1 ? "" : "s") + " and " +
        std::to_string(cleanup->unused_initializers) + " unused initializer" +
        (cleanup->unused_initializers == 1 ? "" : "s"));
  add(std::to_string(nodes_before) + " -> " + std::to_string(nodes_after) + " nodes");
  return s;
}

Expected<SanitizeReport> sanitize(onnx::ModelProto& model, const std::filesystem::path& base_dir,
                                  const SanitizeOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  SanitizeReport rep;
  rep.nodes_before = count_nodes(model.graph());
  if (options.toposort) {
    ODB_ASSIGN_OR_RETURN(int64_t moved, toposort(model));
    rep.moved_nodes = moved;
  }
  if (!options.input_shapes.empty()) {
    ODB_RETURN_IF_ERROR(override_input_shapes(model, options.input_shapes));
    for (const auto& [name, shape] : options.input_shapes)
      rep.overridden_inputs.push_back(name + ": " + shape_to_string(shape));
  }
  if (options.fold_constants) {
    ODB_ASSIGN_OR_RETURN(FoldStats fs, fold_constants(model, base_dir, options.fold));
    rep.fold = std::move(fs);
  }
  if (options.cleanup) rep.cleanup = surgeon::cleanup(model);
  if (options.fold_constants || options.cleanup) refresh_value_info(model, /*update_outputs=*/true);
  rep.nodes_after = count_nodes(model.graph());
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace onnxdbg::surgeon
