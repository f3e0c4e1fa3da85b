// inline_taken_branches (taken_branches.h): each If replaced by the branch its condition picks,
// level by level, the conditions read from a reference run.
#include "surgeon/taken_branches.h"

#include <algorithm>
#include <optional>

#include "model/graph.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {
namespace {

bool is_if(const onnx::NodeProto& n) {
  return n.op_type() == "If" && (n.domain().empty() || n.domain() == "ai.onnx");
}

/// The If's name for people: its own, or "If#<index>" when it has none (model/graph.h's
/// subgraph_path does the same).
std::string if_name(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? "If#" + std::to_string(index) : n.name();
}

Expected<bool> condition_of(const onnx::NodeProto& n, int index, const Tensor& t) {
  if (t.numel() != 1 || t.dtype() == DType::kString)
    return model_error(node_label(n, index) + ": its condition '" + n.input(0) +
                       "' must be a single bool, got " + std::string(dtype_name(t.dtype())) +
                       " of shape " + shape_to_string(t.shape()));
  return t.get_as_double(0) != 0.0;
}

/// Each If of the main graph's condition on `inputs`, by node index: from the inputs or an
/// initializer where it is one, else from a reference run that stops before the last If.
Expected<std::map<int, bool>> conditions(const onnx::ModelProto& model,
                                         const std::filesystem::path& base_dir,
                                         const std::map<std::string, Tensor>& inputs,
                                         const reference::InterpreterOptions& options,
                                         const std::vector<int>& ifs) {
  const onnx::GraphProto& g = model.graph();
  std::map<std::string, std::optional<Tensor>> wanted;  // condition name -> value once known
  for (int i : ifs) {
    const onnx::NodeProto& n = g.node(i);
    if (n.input_size() < 1 || n.input(0).empty())
      return model_error(node_label(n, i) + " has no condition input");
    wanted[n.input(0)];
  }
  for (auto& [name, value] : wanted) {
    if (auto it = inputs.find(name); it != inputs.end()) value = it->second;
  }
  for (const auto& init : g.initializer()) {
    auto it = wanted.find(init.name());
    if (it == wanted.end() || it->second) continue;
    ODB_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(init, base_dir));
    it->second = std::move(t);
  }
  const bool all_known = std::all_of(wanted.begin(), wanted.end(),
                                     [](const auto& w) { return w.second.has_value(); });
  if (!all_known) {
    ODB_ASSIGN_OR_RETURN(std::vector<int> order, topological_order(g));
    size_t end = 0;  // the nodes before the last If, in the order the reference runs them
    for (size_t pos = 0; pos < order.size(); ++pos)
      if (std::find(ifs.begin(), ifs.end(), order[pos]) != ifs.end()) end = pos;
    ODB_ASSIGN_OR_RETURN(auto interp, reference::Interpreter::create(model, base_dir, options));
    ODB_RETURN_IF_ERROR(interp->run_prefix(
        inputs,
        [&](const onnx::NodeProto&, size_t, const std::string& tensor, const Tensor& value) {
          auto it = wanted.find(tensor);
          if (it != wanted.end() && !it->second) it->second = value;
        },
        end));
  }
  std::map<int, bool> out;
  for (int i : ifs) {
    const onnx::NodeProto& n = g.node(i);
    const auto& value = wanted[n.input(0)];
    if (!value)
      return model_error(node_label(n, i) + ": its condition '" + n.input(0) +
                         "' was not computed before it");
    ODB_ASSIGN_OR_RETURN(out[i], condition_of(n, i, *value));
  }
  return out;
}

}  // namespace

Expected<TakenBranches> inline_taken_branches(const onnx::ModelProto& model,
                                              const std::filesystem::path& base_dir,
                                              const std::map<std::string, Tensor>& inputs,
                                              const reference::InterpreterOptions& options) {
  TakenBranches out;
  out.model = model;
  for (int depth = 0;; ++depth) {
    const onnx::GraphProto& g = out.model.graph();
    std::vector<int> ifs;
    for (int i = 0; i < g.node_size(); ++i)
      if (is_if(g.node(i))) ifs.push_back(i);
    if (ifs.empty()) return out;
    if (depth == kMaxInlinedIfDepth) {
      out.left_nested = static_cast<int>(ifs.size());
      return out;
    }
    auto known = conditions(out.model, base_dir, inputs, options, ifs);
    if (!known) return known.status();
    std::map<int, bool>& cond = *known;
    std::vector<TakenBranch> level;
    for (int i : ifs) level.push_back({if_name(g.node(i), i), "If", cond[i], depth});
    // The last If first: replacing node i moves only the nodes after it.
    for (auto it = ifs.rbegin(); it != ifs.rend(); ++it) {
      ODB_ASSIGN_OR_RETURN(onnx::ModelProto next, inline_if_branch(out.model, *it, cond[*it]));
      out.model = std::move(next);
    }
    out.taken.insert(out.taken.end(), level.begin(), level.end());
  }
}

}  // namespace onnxdbg::surgeon
