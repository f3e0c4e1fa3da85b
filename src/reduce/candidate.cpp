// Building candidates: the subset of nodes, the new graph inputs fed with golden values, the
// frontier outputs, dead-node removal and the edits of the attribute/initializer/input strategies.
#include "reduce/candidate.h"

#include <algorithm>
#include <fstream>
#include <unordered_set>

#include "core/onnx.h"
#include "model/external_data.h"
#include "model/graph.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "reference/interpreter.h"

namespace onnxdbg::reduce {

namespace {

std::string fnv1a_hex(const std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* kHex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<size_t>(i)] = kHex[h & 15];
  return out;
}

// Tensor type of a value: from the golden values (concrete dims; a dim that differs between
// samples becomes symbolic), else from shape inference, else from the graph's declarations.
bool type_of(const Original& o, const std::string& name, onnx::TypeProto& out) {
  if (!o.golden.empty()) {
    auto it = o.golden[0].find(name);
    if (it != o.golden[0].end()) {
      const Tensor& t = it->second;
      out.Clear();
      auto* tt = out.mutable_tensor_type();
      tt->set_elem_type(static_cast<int32_t>(t.dtype()));
      auto* shape = tt->mutable_shape();
      for (int64_t d = 0; d < t.rank(); ++d) {
        bool same = true;
        for (size_t s = 1; s < o.golden.size(); ++s) {
          auto jt = o.golden[s].find(name);
          same = same && jt != o.golden[s].end() && jt->second.rank() == t.rank() &&
                 jt->second.dim(d) == t.dim(d);
        }
        if (same)
          shape->add_dim()->set_dim_value(t.dim(d));
        else
          shape->add_dim()->set_dim_param(name + "_dim" + std::to_string(d));
      }
      return true;
    }
  }
  if (auto it = o.inferred.find(name); it != o.inferred.end() && it->second.value_case() != 0) {
    out = it->second;
    return true;
  }
  const auto& g = o.model.graph();
  for (const auto& vi : g.input())
    if (vi.name() == name && vi.has_type()) return out = vi.type(), true;
  for (const auto& vi : g.output())
    if (vi.name() == name && vi.has_type()) return out = vi.type(), true;
  for (const auto& vi : g.value_info())
    if (vi.name() == name && vi.has_type()) return out = vi.type(), true;
  return false;
}

// Per sample, the golden values of `names`; empty when one of them has none.
std::vector<TensorMap> golden_values_of(const Original& o, const std::vector<std::string>& names) {
  std::vector<TensorMap> out(o.golden.size());
  for (size_t s = 0; s < o.golden.size(); ++s)
    for (const auto& name : names) {
      auto it = o.golden[s].find(name);
      if (it == o.golden[s].end()) return {};
      out[s].emplace(name, it->second);
    }
  return out;
}

}  // namespace

Candidate whole_model(const Original& original) {
  Candidate c;
  for (int i = 0; i < original.model.graph().node_size(); ++i) c.nodes.push_back(i);
  return c;
}

Status write_candidate(const BuiltCandidate& c, const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::filesystem::create_directories(dir, ec);
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(c.bytes.data(), static_cast<std::streamsize>(c.bytes.size()));
    if (!f.good())
      return invalid_argument("cannot write the candidate to '" + path.string() +
                              "' (disk full or no permission?)");
  }
  return Status::ok();
}

Status save_candidate(const BuiltCandidate& c, const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  return save_model_with_external_data(c.model, c.base_dir, path, /*share_source_data=*/true);
}

namespace {

// build_candidate's steps, in order: the kept nodes, the outputs, the live nodes, what they read
// (initializers, repaired constants, graph inputs), the outputs' declarations, the bytes.
class CandidateBuilder {
 public:
  CandidateBuilder(const Original& o, const Candidate& c)
      : o_(o), c_(c), g_(o.model.graph()), ix_(o.index), n_(g_.node_size()) {}

  Expected<BuiltCandidate> build() {
    ODB_RETURN_IF_ERROR(mark_kept());
    ODB_RETURN_IF_ERROR(choose_outputs());
    start_model();
    add_live_nodes();
    ODB_RETURN_IF_ERROR(add_reads());
    ODB_RETURN_IF_ERROR(add_outputs());
    if (!o_.golden.empty()) {
      b_.feeds = golden_values_of(o_, b_.inputs);
      if (!b_.feeds.empty() && c_.preserves_values())
        b_.golden_outputs = golden_values_of(o_, b_.outputs);
    }
    b_.base_dir = o_.base_dir;
    if (!b_.model.SerializeToString(&b_.bytes))
      return invalid_argument("the candidate cannot be serialized");
    b_.hash = fnv1a_hex(b_.bytes);
    return std::move(b_);
  }

 private:
  Status mark_kept();
  Status choose_outputs();
  void start_model();
  void add_live_nodes();
  Status add_reads();
  Status add_initializers(const std::vector<std::string>& used_inits,
                          const std::vector<std::string>& constant_inits);
  Status add_inputs(std::vector<std::string> boundary);
  Status add_outputs();
  bool read_by_removed(const std::string& v) const {
    auto it = ix_.consumers.find(v);
    if (it == ix_.consumers.end()) return false;
    for (int k : it->second)
      if (!kept_[static_cast<size_t>(k)]) return true;
    return false;
  }

  const Original& o_;
  const Candidate& c_;
  const onnx::GraphProto& g_;
  const Original::GraphIndex& ix_;
  const int n_;
  std::vector<char> kept_;
  std::unordered_map<std::string, int> producer_;  // value -> kept node producing it
  std::vector<std::string> outputs_;
  BuiltCandidate b_;
};

Status CandidateBuilder::mark_kept() {
  if (c_.nodes.empty()) return invalid_argument("the candidate has no nodes");
  if (static_cast<int>(ix_.reads.size()) != n_)
    return internal_error("build_candidate before prepare_original");
  kept_.assign(static_cast<size_t>(n_), 0);
  for (int i : c_.nodes) {
    if (i < 0 || i >= n_) return invalid_argument("node index out of range");
    kept_[static_cast<size_t>(i)] = 1;
  }
  return Status::ok();
}

// Frontier outputs: values kept nodes produce that the original still needed elsewhere. A
// constant (a Constant node, or a node computing from constants only) whose readers were all
// removed is not one: it carries no part of the failure, and as an output it would keep a dead
// node and add a graph output the failure does not need.
Status CandidateBuilder::choose_outputs() {
  const auto& graph_outputs = ix_.graph_outputs;
  for (int i : c_.nodes)
    for (const auto& out : g_.node(i).output()) {
      if (out.empty()) continue;
      producer_.emplace(out, i);
      const bool frontier = !ix_.constant[static_cast<size_t>(i)] && read_by_removed(out);
      if ((graph_outputs.count(out) || frontier) && !c_.dropped_outputs.count(out))
        outputs_.push_back(out);
    }
  // Keep the original graph outputs first, in their order, then the frontier in node order.
  std::stable_sort(outputs_.begin(), outputs_.end(),
                   [&](const std::string& a, const std::string& b) {
                     return graph_outputs.count(a) > graph_outputs.count(b);
                   });
  if (outputs_.empty()) return invalid_argument("the candidate has no outputs");
  if (!o_.keep_outputs) return Status::ok();
  for (const auto& out : outputs_)
    if (!graph_outputs.count(out))
      return invalid_argument("--no-reduce-outputs: '" + out + "' is not a graph output");
  for (const auto& vi : g_.output())
    if (!ix_.graph_inputs.count(vi.name()) && !ix_.initializers.count(vi.name()) &&
        std::find(outputs_.begin(), outputs_.end(), vi.name()) == outputs_.end())
      return invalid_argument("--no-reduce-outputs: graph output '" + vi.name() + "' is missing");
  return Status::ok();
}

void CandidateBuilder::start_model() {
  auto& m = b_.model;
  m.set_ir_version(o_.model.ir_version());
  *m.mutable_opset_import() = o_.model.opset_import();
  m.set_producer_name("onnxdbg reduce");
  m.set_model_version(o_.model.model_version());
  *m.mutable_functions() = o_.model.functions();
  m.mutable_graph()->set_name(g_.name().empty() ? "reduced" : g_.name());
}

// The nodes some output depends on, in the original's order, with the candidate's removed
// attributes reset.
void CandidateBuilder::add_live_nodes() {
  std::vector<char> live(static_cast<size_t>(n_), 0);
  std::vector<int> live_list;
  std::vector<std::string> work(outputs_.begin(), outputs_.end());
  std::unordered_set<std::string> seen(work.begin(), work.end());
  while (!work.empty()) {
    const std::string v = work.back();
    work.pop_back();
    auto it = producer_.find(v);
    if (it == producer_.end() || live[static_cast<size_t>(it->second)]) continue;
    live[static_cast<size_t>(it->second)] = 1;
    live_list.push_back(it->second);
    for (const auto& r : ix_.reads[static_cast<size_t>(it->second)])
      if (seen.insert(r).second) work.push_back(r);
  }
  std::sort(live_list.begin(), live_list.end());
  auto* mg = b_.model.mutable_graph();
  for (int i : live_list) {
    b_.nodes.push_back(i);
    onnx::NodeProto* node = mg->add_node();
    *node = g_.node(i);
    for (const auto& [ni, attr] : c_.removed_attributes) {
      if (ni != i) continue;
      auto* attrs = node->mutable_attribute();
      for (int k = 0; k < attrs->size(); ++k)
        if (attrs->Get(k).name() == attr) {
          attrs->DeleteSubrange(k, 1);
          break;
        }
    }
  }
}

// What the kept nodes read and do not produce: the original's initializers, constants repaired
// into initializers (a constant a kept node reads whose producer was removed is no new graph
// input: it holds its value, as Polygraphy's cuts never make a constant an input, so a runtime
// sees the constant the original gave it), and new graph inputs.
Status CandidateBuilder::add_reads() {
  std::unordered_set<std::string> defined;
  for (int i : b_.nodes)
    for (const auto& out : g_.node(i).output())
      if (!out.empty()) defined.insert(out);
  std::vector<std::string> used_inits, constant_inits, boundary;
  std::unordered_set<std::string> added;
  for (int i : b_.nodes)
    for (const auto& r : ix_.reads[static_cast<size_t>(i)]) {
      if (defined.count(r) || !added.insert(r).second) continue;
      if (ix_.initializers.count(r))
        used_inits.push_back(r);
      else if (ix_.constant_values.count(r) && !o_.golden.empty() && o_.golden[0].count(r))
        constant_inits.push_back(r);
      else
        boundary.push_back(r);
    }
  ODB_RETURN_IF_ERROR(add_initializers(used_inits, constant_inits));
  return add_inputs(std::move(boundary));
}

Status CandidateBuilder::add_initializers(const std::vector<std::string>& used_inits,
                                          const std::vector<std::string>& constant_inits) {
  auto* mg = b_.model.mutable_graph();
  for (const auto& name : used_inits) {
    onnx::TensorProto* t = mg->add_initializer();
    const onnx::TensorProto& src = g_.initializer(ix_.initializers.at(name));
    if (c_.zeroed_initializers.count(name)) {
      ODB_ASSIGN_OR_RETURN(Tensor v, tensor_from_proto(src, o_.base_dir));
      ODB_ASSIGN_OR_RETURN(Tensor z, Tensor::make(v.dtype(), v.shape()));
      *t = tensor_to_proto(z, name);
    } else {
      *t = src;
    }
  }
  for (const auto& name : constant_inits) {
    const Tensor& v = o_.golden[0].at(name);
    if (c_.zeroed_initializers.count(name)) {
      ODB_ASSIGN_OR_RETURN(Tensor z, Tensor::make(v.dtype(), v.shape()));
      *mg->add_initializer() = tensor_to_proto(z, name);
    } else {
      *mg->add_initializer() = tensor_to_proto(v, name);
    }
  }
  return Status::ok();
}

// The boundary values become graph inputs (frozen ones initializers with their golden value);
// before IR 4 every initializer is also listed as an input.
Status CandidateBuilder::add_inputs(std::vector<std::string> boundary) {
  auto* mg = b_.model.mutable_graph();
  if (o_.keep_inputs) {
    // Only the output side is cut: the candidate reads graph inputs of the original and nothing
    // else (a model of constants alone is not such a cut), and declares all of them, read or not,
    // as Polygraphy's --no-reduce-inputs keeps the model's inputs.
    for (const auto& name : boundary)
      if (!ix_.graph_inputs.count(name) || c_.frozen_inputs.count(name))
        return invalid_argument("--no-reduce-inputs: '" + name + "' is not a graph input");
    for (const auto& name : ix_.fed_inputs)
      if (c_.frozen_inputs.count(name))
        return invalid_argument("--no-reduce-inputs: graph input '" + name + "' is frozen");
    if (boundary.empty() && !ix_.fed_inputs.empty())
      return invalid_argument("--no-reduce-inputs: the candidate reads no graph input");
    boundary = ix_.fed_inputs;
  }
  for (const auto& name : boundary) {
    if (c_.frozen_inputs.count(name)) {
      if (o_.golden.empty() || !o_.golden[0].count(name))
        return invalid_argument("no golden value to freeze '" + name + "'");
      *mg->add_initializer() = tensor_to_proto(o_.golden[0].at(name), name);
      continue;
    }
    onnx::ValueInfoProto* vi = mg->add_input();
    vi->set_name(name);
    if (!type_of(o_, name, *vi->mutable_type()))
      return invalid_argument("the type of new input '" + name + "' is unknown");
    b_.inputs.push_back(name);
  }
  if (b_.model.ir_version() < 4)
    for (const auto& t : mg->initializer()) {
      onnx::ValueInfoProto* vi = mg->add_input();
      vi->set_name(t.name());
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(t.data_type());
      for (int64_t d : t.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
  return Status::ok();
}

// The outputs' declarations, and with --force-fallback-shape-inference value_info for every
// other value a kept node produces (from the golden values).
Status CandidateBuilder::add_outputs() {
  auto* mg = b_.model.mutable_graph();
  for (const auto& name : outputs_) {
    onnx::ValueInfoProto* vi = mg->add_output();
    vi->set_name(name);
    if (!type_of(o_, name, *vi->mutable_type()))
      return invalid_argument("the type of output '" + name + "' is unknown");
    b_.outputs.push_back(name);
  }
  if (!o_.fallback_shapes || o_.golden.empty()) return Status::ok();
  for (int i : b_.nodes)
    for (const auto& out : g_.node(i).output()) {
      if (out.empty() || std::find(outputs_.begin(), outputs_.end(), out) != outputs_.end())
        continue;
      onnx::TypeProto t;
      if (o_.golden[0].count(out) && type_of(o_, out, t)) {
        onnx::ValueInfoProto* vi = mg->add_value_info();
        vi->set_name(out);
        *vi->mutable_type() = t;
      }
    }
  return Status::ok();
}

}  // namespace

Expected<BuiltCandidate> build_candidate(const Original& o, const Candidate& c) {
  return CandidateBuilder(o, c).build();
}

namespace {
// onnx::checker::check_model's steps with the original's folder as the checker's model folder:
// check_model(ModelProto) would look for external data in the working directory.
void check_model_in(const onnx::ModelProto& m, const std::filesystem::path& base_dir) {
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(m.ir_version()));
  ctx.set_model_dir(base_dir.string());
  std::unordered_map<std::string, int> imports;
  for (const auto& op : m.opset_import()) imports[op.domain()] = static_cast<int>(op.version());
  ctx.set_opset_imports(imports);
  onnx::checker::LexicalScopeContext lex;
  onnx::checker::check_graph(m.graph(), ctx, lex);
  if (m.ir_version() >= 8) {
    onnx::checker::check_model_local_functions(m, ctx, lex);
    onnx::checker::check_function_call_cycles(m);
  }
}
}  // namespace

Status verify_candidate(const Original& o, const BuiltCandidate& c) {
  if (!o.verify) return Status::ok();
  try {
    check_model_in(c.model, c.base_dir);
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (size_t p = what.find("==> Context"); p != std::string::npos) what = what.substr(0, p);
    while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) what.pop_back();
    return model_error("ONNX checker: " + what);
  }
  // A value-preserving subset fed with golden values has the very types the original had, which
  // shape inference already accepted; only edited candidates need inference again.
  const bool edited = c.golden_outputs.empty();
  if (!o.fallback_shapes && o.infer_candidates && edited) {
    InferredTypes t = infer_shapes(c.model, /*strict=*/true);
    if (!t.error.empty()) return model_error("shape inference: " + t.error);
  }
  return Status::ok();
}

std::vector<std::string> optional_attributes(const onnx::ModelProto& model,
                                             const onnx::NodeProto& node) {
  std::vector<std::string> out;
  const std::string domain = canonical_domain(node.domain());
  const int64_t opset = model_opset(model, domain);
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(opset > 0 ? opset : 1), domain);
  if (!schema) return out;
  for (const auto& a : node.attribute()) {
    auto it = schema->attributes().find(a.name());
    if (it != schema->attributes().end() && !it->second.required) out.push_back(a.name());
  }
  return out;
}

Status prepare_original(Original& o) {
  auto& g = *o.model.mutable_graph();
  // External weights stay external: candidates keep the references, and write_candidate links
  // the data files beside each written candidate.
  // Strict inference once: its types serve candidates, and whether it succeeds on the original
  // decides whether edited candidates are checked with it.
  InferredTypes strict = infer_shapes(o.model, /*strict=*/true);
  o.infer_candidates = strict.error.empty();
  o.inferred = o.infer_candidates ? std::move(strict.types) : infer_shapes(o.model).types;
  o.index = {};
  for (const auto& n : g.node()) o.index.reads.push_back(node_reads(n));
  o.index.consumers = consumers(g);
  for (int i = 0; i < g.initializer_size(); ++i)
    o.index.initializers.emplace(g.initializer(i).name(), i);
  o.index.graph_inputs = graph_input_names(g);
  o.index.graph_outputs = graph_output_names(g);
  for (const auto& vi : g.input())
    if (!o.index.initializers.count(vi.name())) o.index.fed_inputs.push_back(vi.name());
  // Nodes are in topological order (candidates keep the original order): one sweep marks every
  // node whose value depends on a graph input.
  std::unordered_set<std::string> varying(o.index.fed_inputs.begin(), o.index.fed_inputs.end());
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& r = o.index.reads[static_cast<size_t>(i)];
    const bool constant =
        std::none_of(r.begin(), r.end(), [&](const std::string& v) { return varying.count(v); });
    o.index.constant.push_back(constant ? 1 : 0);
    for (const auto& out : g.node(i).output())
      if (!out.empty()) (constant ? o.index.constant_values : varying).insert(out);
  }

  o.golden.clear();
  o.golden_error.clear();
  auto interp = reference::Interpreter::create(o.model, o.base_dir);
  if (!interp) {
    o.golden_error = interp.status().to_string();
  } else {
    for (const auto& sample : o.samples) {
      TensorMap values = sample;
      auto hook = [&](const onnx::NodeProto&, size_t, const std::string& name, const Tensor& v) {
        values.insert_or_assign(name, v);
      };
      auto r = (*interp)->run(sample, hook);
      if (!r) {
        o.golden.clear();
        o.golden_error = r.status().to_string();
        break;
      }
      o.golden.push_back(std::move(values));
    }
  }

  if (!o.provided.empty()) {
    const auto produced = producers(g);
    for (const auto& [name, t] : o.provided)
      if (!produced.count(name))
        return invalid_argument("the loaded value '" + name +
                                "' is not a tensor of the model; was it saved from another model?");
    if (o.golden.empty() && !o.samples.empty()) {
      o.golden.push_back(o.samples[0]);
      o.golden_error.clear();
    }
    if (!o.golden.empty())
      for (const auto& [name, t] : o.provided) o.golden[0].insert_or_assign(name, t);
  }

  o.verify = true;
  auto whole = build_candidate(o, whole_model(o));
  if (!whole) {
    o.verify = false;
    o.verify_note = whole.status().message();
  } else if (Status st = verify_candidate(o, *whole); !st) {
    o.verify = false;
    o.verify_note = "the original model itself fails verification (" + st.message() +
                    "); candidates are not verified before the oracle";
  }
  return Status::ok();
}

}  // namespace onnxdbg::reduce
