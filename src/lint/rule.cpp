// Helpers shared by lint rules: scope lookup, edit-distance hints, the op version history, type
// printing, and the one strict shape-inference run that shape_inference and value_info_mismatch
// share.
#include "lint/rule.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <unordered_set>

#include "core/onnx.h"
#include "lint/fixes.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "onnx/shape_inference/implementation.h"

namespace onnxdbg::lint {

const GraphInfo* GraphInfo::scope_of(const std::string& name) const {
  for (const GraphInfo* g = this; g; g = g->parent)
    if (g->defines(name)) return g;
  return nullptr;
}

std::vector<std::string> GraphInfo::visible_names() const {
  std::vector<std::string> out;
  for (const GraphInfo* g = this; g; g = g->parent)
    for (const auto& [name, p] : g->producer) out.push_back(name);
  std::sort(out.begin(), out.end());  // deterministic hints regardless of hash order
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::unordered_set<std::string> used_names(const GraphInfo& g) {
  std::unordered_set<std::string> used;
  for (int64_t i = 0; i < g.node_count(); ++i) {
    for (const auto& in : g.node(i).input())
      if (!in.empty()) used.insert(in);
    for (const auto& in : g.implicit_inputs[static_cast<size_t>(i)]) used.insert(in);
  }
  for (const auto& o : g.graph->output()) used.insert(o.name());
  return used;
}

std::string domain_display(const std::string& domain) {
  return domain.empty() ? std::string("ai.onnx") : domain;
}

size_t edit_distance(const std::string& a, const std::string& b, size_t limit) {
  const size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > limit) return limit + 1;
  std::vector<size_t> prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= m; ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit) return limit + 1;  // every path already costs more than we accept
    std::swap(prev, cur);
  }
  return std::min(prev[m], limit + 1);
}

std::optional<std::string> closest_name(const std::string& name,
                                        const std::vector<std::string>& candidates) {
  size_t best = std::max<size_t>(2, name.size() / 3);
  std::optional<std::string> out;
  // Case-only differences ("conv" vs "Conv") are the likeliest typo: prefer them outright.
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string lname = lower(name);
  for (const auto& c : candidates)
    if (c != name && c.size() == name.size() && lower(c) == lname) return c;
  for (const auto& c : candidates) {
    if (c == name) continue;
    const size_t d = edit_distance(name, c, best);
    if (d < best || (d == best && !out)) {
      best = d;
      out = c;
    }
  }
  if (out || name.size() < 3) return out;
  // Truncations and extensions ("kernel" for "kernel_shape") are far in edit distance.
  for (const auto& c : candidates)
    if (c.size() >= 3 && c != name && (c.rfind(name, 0) == 0 || name.rfind(c, 0) == 0) &&
        (!out || c.size() < out->size()))
      out = c;
  return out;
}

const std::map<std::string, std::map<std::string, OpHistory>>& op_histories() {
  static const auto histories = [] {
    std::map<std::string, std::map<std::string, std::vector<std::pair<int, bool>>>> raw;
    for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history())
      raw[canonical_domain(s.domain())][s.Name()].emplace_back(s.since_version(), s.Deprecated());
    std::map<std::string, std::map<std::string, OpHistory>> out;
    for (auto& [domain, ops] : raw)
      for (auto& [op, versions] : ops) {
        std::sort(versions.begin(), versions.end());
        OpHistory& h = out[domain][op];
        for (const auto& [v, dep] : versions) {
          h.since_versions.push_back(v);
          h.deprecated.push_back(dep);
        }
      }
    return out;
  }();
  return histories;
}

int64_t newest_known_opset(const std::string& domain) {
  return max_known_opset(canonical_domain(domain));
}

namespace {

std::string elem_type_name(int32_t t) {
  if (t == 0) return "?";
  const auto* d = onnx::TensorProto_DataType_descriptor();
  const auto* v = d->FindValueByNumber(t);
  if (!v) return std::to_string(t);
  std::string s = v->name();
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string shape_string(const onnx::TensorShapeProto& shape) {
  std::string s = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    if (i) s += ",";
    const auto& d = shape.dim(i);
    s += d.has_dim_value()   ? std::to_string(d.dim_value())
         : d.has_dim_param() ? d.dim_param()
                             : "?";
  }
  return s + "]";
}

}  // namespace

std::string type_to_string(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return "tensor(" + elem_type_name(t.tensor_type().elem_type()) + ")" +
             (t.tensor_type().has_shape() ? shape_string(t.tensor_type().shape()) : "");
    case onnx::TypeProto::kSparseTensorType:
      return "sparse_tensor(" + elem_type_name(t.sparse_tensor_type().elem_type()) + ")" +
             (t.sparse_tensor_type().has_shape() ? shape_string(t.sparse_tensor_type().shape())
                                                 : "");
    case onnx::TypeProto::kSequenceType:
      return "sequence(" + type_to_string(t.sequence_type().elem_type()) + ")";
    case onnx::TypeProto::kOptionalType:
      return "optional(" + type_to_string(t.optional_type().elem_type()) + ")";
    case onnx::TypeProto::kMapType:
      return "map(" + elem_type_name(t.map_type().key_type()) + "," +
             type_to_string(t.map_type().value_type()) + ")";
    default:
      return "undefined";
  }
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool fits_schema(const onnx::NodeProto& node, const onnx::OpSchema& schema) {
  const int inputs = node.input_size(), outputs = node.output_size();
  if (inputs < schema.min_input() || inputs > schema.max_input()) return false;
  if (outputs < schema.min_output() || outputs > schema.max_output()) return false;
  const auto& attrs = schema.attributes();
  for (const auto& a : node.attribute())
    if (!attrs.count(a.name())) return false;
  for (const auto& [name, a] : attrs)
    if (a.required && !find_attribute(node, name)) return false;
  return true;
}

int64_t form_opset(const onnx::NodeProto& node, const std::string& domain, int64_t after) {
  const auto& histories = op_histories();
  auto dit = histories.find(canonical_domain(domain));
  if (dit == histories.end()) return 0;
  auto oit = dit->second.find(node.op_type());
  if (oit == dit->second.end()) return 0;
  const OpHistory& h = oit->second;
  for (size_t k = 0; k < h.since_versions.size(); ++k) {
    const int v = h.since_versions[k];
    if (v <= after || h.deprecated[k]) continue;
    const auto* s = onnx::OpSchemaRegistry::Schema(node.op_type(), v, canonical_domain(domain));
    if (s && s->since_version() == v && fits_schema(node, *s)) return v;
  }
  return 0;
}

std::string ints_to_string(const onnx::AttributeProto& a) {
  std::string s = "[";
  for (int k = 0; k < a.ints_size(); ++k) s += (k ? ", " : "") + std::to_string(a.ints(k));
  return s + "]";
}

std::string dims_to_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t k = 0; k < dims.size(); ++k)
    s += (k ? ", " : "") + (dims[k] < 0 ? std::string("?") : std::to_string(dims[k]));
  return s + "]";
}

std::string stored_dims_to_string(const google::protobuf::RepeatedField<int64_t>& dims) {
  std::string s = "[";
  for (int64_t d : dims) s += (s.size() > 1 ? ", " : "") + std::to_string(d);
  return s + "]";
}

ShapeIndex::ShapeIndex(RuleContext& ctx, const GraphInfo& g) {
  auto add_type = [&](const std::string& name, const onnx::TypeProto& t) {
    if (!t.has_tensor_type() || !t.tensor_type().has_shape() || shapes_.count(name)) return;
    std::vector<int64_t> dims;
    for (const auto& d : t.tensor_type().shape().dim())
      dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
    shapes_.emplace(name, std::move(dims));
  };
  // Initializers first: their dims are the data's, whatever a declaration says.
  for (const auto& t : g.graph->initializer())
    shapes_.emplace(t.name(), std::vector<int64_t>(t.dims().begin(), t.dims().end()));
  for (const auto& vi : g.graph->input()) add_type(vi.name(), vi.type());
  for (const auto& vi : g.graph->value_info()) add_type(vi.name(), vi.type());
  for (const auto& vi : g.graph->output()) add_type(vi.name(), vi.type());
  const auto& inferred = ctx.inference().inferred;
  if (static_cast<size_t>(g.index) < inferred.size())
    for (const auto& [name, t] : inferred[static_cast<size_t>(g.index)]) add_type(name, t);
}

const std::vector<int64_t>* ShapeIndex::find(const std::string& name) const {
  auto it = shapes_.find(name);
  return it == shapes_.end() ? nullptr : &it->second;
}

// --- RuleContext --------------------------------------------------------------------------------

RuleContext::RuleContext(const LoadedModel& model, std::vector<std::unique_ptr<GraphInfo>> graphs,
                         bool trials)
    : model_(model), graphs_(std::move(graphs)), trials_(trials) {
  for (const auto& op : model.proto.opset_import())
    opsets_[canonical_domain(op.domain())] = op.version();
  // IR versions before 3 had no opset_import: the default domain at opset 1 is implied.
  if (model.proto.ir_version() < 3 && opsets_.empty()) opsets_[""] = 1;
  newer_than_known_ = model.proto.ir_version() > max_known_ir_version();
  for (const auto& [domain, version] : opsets_) {
    const int64_t known = newest_known_opset(domain);
    if (known > 0 && version > known) newer_than_known_ = true;
  }
  for (const auto& f : model.proto.functions())
    local_functions_.insert(f.domain() + ":" + f.name());
}

int64_t RuleContext::opset(const std::string& domain) const {
  auto it = opsets_.find(canonical_domain(domain));
  return it == opsets_.end() ? 0 : it->second;
}

bool RuleContext::is_local_function(const onnx::NodeProto& node) const {
  return !local_functions_.empty() && local_functions_.count(node.domain() + ":" + node.op_type());
}

SchemaLookup RuleContext::lookup(const onnx::NodeProto& node) const {
  SchemaLookup r;
  const std::string domain = canonical_domain(node.domain());
  r.opset = opset(domain);
  r.domain_imported = r.opset > 0;
  const int64_t known = newest_known_opset(domain);
  r.known_domain = known > 0;
  if (!r.known_domain) return r;
  r.beyond_known = r.opset > known;
  r.checked_opset = r.domain_imported ? std::min(r.opset, known) : known;
  r.schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(r.checked_opset), domain);
  return r;
}

const FixTrial& RuleContext::try_fix(const std::string& key,
                                     const std::function<Status(onnx::ModelProto&)>& edit) {
  auto [it, inserted] = fix_trials_.try_emplace(key);
  FixTrial& t = it->second;
  if (!inserted || !trials_ || model_.path.empty()) return t;
  t.tried = true;
  // What `onnxdbg surgeon` does: the edit, then lint of the result (surgeon's check_edit), which
  // resolves external data against the source model's folder.
  LoadedModel copy;
  copy.proto = model_.proto;
  copy.base_dir = model_.base_dir;
  if (Status st = edit(copy.proto); !st) {
    t.edit_error = st.to_string();
  } else if (auto findings = lint_without_trials(copy); !findings) {
    t.edit_error = findings.status().to_string();
  } else {
    t.errors_after = count_findings(*findings).error;
  }
  // Backquotes in a message mark a command that works; an error's own quoting must not.
  std::replace(t.edit_error.begin(), t.edit_error.end(), '`', '\'');
  return t;
}

std::string RuleContext::surgeon_command(const std::string& command, const std::string& flags,
                                         const std::string& out_suffix) const {
  return surgeon_command_line(model_.path, command, flags, out_suffix);
}

std::string RuleContext::describe(const onnx::NodeProto& node, int64_t index) {
  return "node " + node_label(node, index);
}

void RuleContext::report(Severity s, const GraphInfo& g, int64_t node, std::string message) {
  Finding f;
  f.rule = rule_;
  f.severity = s;
  f.graph = g.path;
  f.node_index = node;
  if (node >= 0 && node < g.node_count()) {
    f.node = g.node(node).name();
    f.op_type = g.node(node).op_type();
    f.label = node_label(g.node(node), node);
  }
  f.message = std::move(message);
  findings_.emplace_back(g.index, std::move(f));
}

// --- shape inference ----------------------------------------------------------------------------

namespace {

constexpr const char* kNamePrefix = "__onnxdbg_";

// Strips what inference must infer rather than trust, and names every node after its position
// (graph index, node index) so errors can be traced back even for unnamed or duplicate names.
// Every value a node produces or reads without a definition gets a placeholder type (an empty
// TypeProto, which inference fills in): ONNX 1.12's data propagation dereferences a missing input
// type and crashes (Shape after a custom op, after an undefined name, after a failed node).
void prepare_for_inference(onnx::GraphProto& g, int& counter,
                           const std::vector<std::unique_ptr<GraphInfo>>& graphs) {
  const int gi = counter++;
  const GraphInfo& info = *graphs[static_cast<size_t>(gi)];
  g.clear_value_info();
  for (auto& o : *g.mutable_output()) o.mutable_type()->Clear();
  for (int i = 0; i < g.node_size(); ++i)
    g.mutable_node(i)->set_name(kNamePrefix + std::to_string(gi) + "_" + std::to_string(i));
  add_inference_placeholders(g, [&](const std::string& n) { return info.scope_of(n) != nullptr; });
  // Same order as for_each_subgraph, so graph indices match the driver's GraphInfo::index.
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) prepare_for_inference(*a.mutable_g(), counter, graphs);
      for (auto& sg : *a.mutable_graphs()) prepare_for_inference(sg, counter, graphs);
    }
}

void collect_inferred(const onnx::GraphProto& g, InferenceRun& run) {
  auto& m = run.inferred.emplace_back();
  // Placeholders that inference never filled stay VALUE_NOT_SET: nothing was inferred.
  for (const auto& vi : g.value_info())
    if (vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) m[vi.name()] = vi.type();
  for (const auto& vi : g.output())
    if (vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) m[vi.name()] = vi.type();
  for (const auto& n : g.node())
    for_each_subgraph(
        n, [&](const onnx::GraphProto& sub, const std::string&) { collect_inferred(sub, run); });
}

// "(op_type:Add, node name: __onnxdbg_0_5): [ShapeInferenceError] msg" -> errors by position.
void parse_inference_errors(const std::string& text, InferenceRun& run) {
  const std::string marker = std::string("node name: ") + kNamePrefix;
  size_t pos = text.find(marker);
  if (pos == std::string::npos) {
    run.other_error = text;
    return;
  }
  while (pos != std::string::npos) {
    size_t p = pos + marker.size();
    InferenceRun::NodeError e;
    size_t end = 0;
    try {
      e.graph = std::stoi(text.substr(p), &end);
      p += end + 1;  // skip '_'
      e.node = std::stoll(text.substr(p), &end);
      p += end;
    } catch (const std::exception&) {
      break;
    }
    if (text.compare(p, 3, "): ") == 0) p += 3;
    size_t next = text.find(marker, p);
    // The message runs to the next "(op_type:" that precedes the next marker.
    size_t stop = next == std::string::npos ? text.size() : text.rfind("(op_type:", next);
    if (stop == std::string::npos || stop < p)
      stop = next == std::string::npos ? text.size() : next;
    std::string msg = text.substr(p, stop - p);
    for (const std::string prefix : {"[ShapeInferenceError] ", "[TypeInferenceError] "})
      for (size_t k = msg.find(prefix); k != std::string::npos; k = msg.find(prefix))
        msg.erase(k, prefix.size());
    for (auto& c : msg)
      if (c == '\n') c = ' ';
    while (!msg.empty() && (msg.back() == ' ' || msg.back() == '.')) msg.pop_back();
    e.message = msg;
    run.node_errors.push_back(std::move(e));
    pos = next;
  }
}

}  // namespace

const InferenceRun& RuleContext::inference() {
  if (inference_) return *inference_;
  InferenceRun run;
  const auto& src = model_.proto;
  onnx::ModelProto copy;
  copy.set_ir_version(src.ir_version());
  *copy.mutable_opset_import() = src.opset_import();
  *copy.mutable_functions() = src.functions();
  auto* g = copy.mutable_graph();
  const auto& sg = src.graph();
  g->set_name(sg.name());
  *g->mutable_input() = sg.input();
  *g->mutable_output() = sg.output();
  *g->mutable_node() = sg.node();
  *g->mutable_sparse_initializer() = sg.sparse_initializer();
  for (const auto& t : sg.initializer()) copy_initializer(t, g->add_initializer());
  int counter = 0;
  prepare_for_inference(*g, counter, graphs_);

  for (const auto& gi : graphs_)
    for (const auto& n : gi->graph->node())
      if (!lookup(n).schema && !is_local_function(n)) {
        const std::string op = domain_display(canonical_domain(n.domain())) + "." + n.op_type();
        if (std::find(run.unsupported_ops.begin(), run.unsupported_ops.end(), op) ==
            run.unsupported_ops.end())
          run.unsupported_ops.push_back(op);
      }

  // In a child process: libonnx 1.12 crashes on some hostile models (issue 17).
  if (const std::string error = run_onnx_shape_inference(copy, /*strict=*/true); !error.empty())
    parse_inference_errors(error, run);
  collect_inferred(copy.graph(), run);
  inference_ = std::move(run);
  return *inference_;
}

}  // namespace onnxdbg::lint
