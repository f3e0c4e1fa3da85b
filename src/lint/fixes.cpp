// The edits behind lint's suggested commands: the topological sort of `surgeon sanitize
// --toposort` (model/graph.h's stable order, graph by graph, each subgraph with its enclosing
// graphs' names as outer scope) and `surgeon convert-opset` (ONNX's version converter, with large
// and external weights kept out of its way and its exceptions turned into one sentence).
#include "lint/fixes.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>
#include <unordered_set>

#include "core/numel.h"
#include "model/graph.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "onnx/version_converter/convert.h"

namespace onnxdbg::lint {

// --- sort_nodes ----------------------------------------------------------------------------------

namespace {

Expected<int64_t> sort_graph(onnx::GraphProto& g, const std::string& path, const NameSet& outer) {
  auto order = topological_order(g, outer);
  if (!order) return std::move(order).status().with_context("while sorting graph '" + path + "'");
  int64_t moved = 0;
  for (int i = 0; i < g.node_size(); ++i) moved += (*order)[static_cast<size_t>(i)] != i;
  if (moved) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
    for (int v : *order) *sorted.Add() = std::move(*g.mutable_node(v));
    g.mutable_node()->Swap(&sorted);
  }
  if (std::none_of(g.node().begin(), g.node().end(), has_subgraph)) return moved;
  NameSet visible = outer;
  for (const auto& name : defined_names(g)) visible.insert(name);
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& node = *g.mutable_node(i);
    Status st;
    for_each_subgraph_mut(node, [&](onnx::GraphProto& sg, const std::string& attr) {
      if (!st) return;
      auto r = sort_graph(sg, subgraph_path(path, node, i, attr), visible);
      if (!r)
        st = r.status();
      else
        moved += *r;
    });
    if (!st) return st;
  }
  return moved;
}

}  // namespace

Expected<int64_t> sort_nodes(onnx::ModelProto& model) {
  // Sort a copy so a cycle leaves the model untouched.
  onnx::GraphProto g = model.graph();
  ODB_ASSIGN_OR_RETURN(int64_t moved, sort_graph(g, "main", {}));
  if (moved) model.mutable_graph()->Swap(&g);
  return moved;
}

// --- convert_opset -------------------------------------------------------------------------------

namespace {

// "No Adapter To Version $13 for Foo" (and variants) -> "Foo"; "" when the text names no op.
std::string op_in_message(const std::string& what) {
  static const std::regex re(
      "No Adapter (?:To|From|For)(?: Version \\$?[0-9]+ for)? ([A-Za-z0-9_]+)");
  std::smatch m;
  if (std::regex_search(what, m, re)) return m[1];
  return {};
}

std::string first_line(std::string s) {
  if (auto p = s.find('\n'); p != std::string::npos) s.resize(p);
  while (!s.empty() && (s.back() == ' ' || s.back() == '.')) s.pop_back();
  return s;
}

}  // namespace

namespace {
// A default-domain opset the linked ONNX knows (1..28 for ONNX 1.23), else kInvalidArgument
// naming the range.
Status check_known_opset(int64_t target) {
  const int64_t known = max_known_opset("");
  if (target < 1 || target > known)
    return invalid_argument("--opset " + std::to_string(target) +
                            " is outside the opsets this ONNX knows (1 to " +
                            std::to_string(known) + ")");
  return Status::ok();
}
}  // namespace

Status convert_opset(onnx::ModelProto& model, int64_t target) {
  ODB_RETURN_IF_ERROR(check_known_opset(target));
  const int64_t from = model_opset(model, "");
  if (from == 0) return invalid_argument("the model imports no default-domain (ai.onnx) opset");
  if (from == target) return Status::ok();

  // The converter copies every initializer into its IR and drops external-data references; large
  // weights go around it as temporary graph inputs and come back by name.
  onnx::ModelProto work = model;
  // Adapters such as Softmax 12->13 read input shapes from value_info: give them fresh ones.
  refresh_value_info(work, /*update_outputs=*/false);
  auto* g = work.mutable_graph();
  std::unordered_set<std::string> inputs;
  for (const auto& vi : g->input()) inputs.insert(vi.name());
  std::vector<onnx::TensorProto> aside;
  std::unordered_set<std::string> temp_inputs;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  for (auto& t : *g->mutable_initializer()) {
    const int64_t numel = saturating_numel(t.dims());
    if (t.data_location() != onnx::TensorProto::EXTERNAL && numel <= 1024) {
      *kept.Add() = std::move(t);
      continue;
    }
    if (!inputs.count(t.name())) {
      auto* vi = g->add_input();
      vi->set_name(t.name());
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(t.data_type());
      auto* s = tt->mutable_shape();
      for (auto d : t.dims()) s->add_dim()->set_dim_value(d);
      temp_inputs.insert(t.name());
    }
    aside.push_back(std::move(t));
  }
  g->mutable_initializer()->Swap(&kept);

  onnx::ModelProto converted;
  try {
    converted = onnx::version_conversion::ConvertVersion(work, static_cast<int>(target));
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const std::string op = op_in_message(what);
    const std::string dir = target > from ? "up" : "down";
    if (!op.empty())
      return unsupported("ONNX's version converter cannot convert " + op + " from opset " +
                         std::to_string(from) + " to " + std::to_string(target) +
                         " (it has no adapter for " + op +
                         " in that direction: " + first_line(what) + ")");
    const bool shapes = what.find("shape is unknown") != std::string::npos;
    return unsupported("ONNX's version converter failed to convert the model from opset " +
                       std::to_string(from) + " to " + std::to_string(target) + ": " +
                       first_line(what) +
                       (shapes ? " (make shapes static first: `onnxdbg surgeon sanitize "
                                 "--override-input-shapes ... --fold-constants`)"
                               : ""));
  }
  auto* cg = converted.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> ins;
  for (auto& vi : *cg->mutable_input())
    if (!temp_inputs.count(vi.name())) *ins.Add() = std::move(vi);
  cg->mutable_input()->Swap(&ins);
  for (auto& t : aside) *cg->add_initializer() = std::move(t);
  // The converter keeps no functions or metadata of its own; carry them over.
  *converted.mutable_functions() = model.functions();
  *converted.mutable_metadata_props() = model.metadata_props();
  if (converted.producer_name().empty()) converted.set_producer_name(model.producer_name());
  model = std::move(converted);
  return Status::ok();
}

Status set_opset(onnx::ModelProto& model, int64_t target) {
  ODB_RETURN_IF_ERROR(check_known_opset(target));
  for (auto& o : *model.mutable_opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      o.set_version(target);
      return Status::ok();
    }
  auto* o = model.add_opset_import();
  o->set_domain("");
  o->set_version(target);
  return Status::ok();
}

namespace {

// A path as one shell word: unchanged when it holds only characters no shell treats specially,
// else in single quotes (a quote inside as '\'').
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           (c != '\0' && std::strchr("_-./+,:@%=", c) != nullptr);
  });
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string surgeon_command_line(const std::filesystem::path& model_path,
                                 const std::string& command, const std::string& flags,
                                 const std::string& out_suffix) {
  std::filesystem::path model = model_path.empty() ? "model.onnx" : model_path;
  // A relative path starting with '-' would read as an option.
  if (model.string().front() == '-') model = std::filesystem::path(".") / model;
  const std::filesystem::path out =
      model.parent_path() / (model.stem().string() + "." + out_suffix + ".onnx");
  return "onnxdbg surgeon " + command + " " + shell_word(model.string()) + " " + flags + " -o " +
         shell_word(out.string());
}

}  // namespace onnxdbg::lint
