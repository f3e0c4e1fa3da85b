// api::bisect_optimizers (include/onnxdbg/bisect_optimizers.h): one api::run per session, all on
// the same input samples and compared with the same baseline outputs; reduce's
// minimal_by_bisection over the graph transformers ONNX Runtime's log says changed the model; a
// rule-based transformer opened into its rules; then the optimized models with and without the
// culprits, compared node by node.
#include "onnxdbg/bisect_optimizers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "backends/backend.h"
#include "backends/onnxruntime/onnxruntime_optimizers.h"
#include "core/temp_dir.h"
#include "model/external_data.h"
#include "model/graph.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "reduce/ddmin.h"

namespace onnxdbg::api {

namespace {

namespace fs = std::filesystem;

/// Transformers ONNX Runtime runs whatever the level and whatever disable= says: never a
/// candidate (their log lines say "modified: 1" all the same).
const std::set<std::string> kAlwaysRun = {"CastFloat16Transformer",
                                          "RemoveDuplicateCastTransformer", "MemcpyTransformer"};

/// `spec` with `names` disabled too: transformer and rule names join its disable= list; a
/// "config.KEY" name removes that session config entry (back to ONNX Runtime's default). The
/// session lists the transformers that still changed the model (list_transformers=on).
BackendSpec with_disabled(BackendSpec spec, const std::vector<std::string>& names) {
  spec.options["list_transformers"] = "on";
  std::string list = spec.option("disable");
  for (const auto& n : names) {
    if (n.rfind("config.", 0) == 0) {
      spec.options.erase(n);
      continue;
    }
    list += (list.empty() ? "" : "+") + n;
  }
  if (!list.empty()) spec.options["disable"] = list;
  return spec;
}

/// `names` without `name`, in their order.
std::vector<std::string> all_but(const std::vector<std::string>& names, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (n != name) out.push_back(n);
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  return names.empty() ? "nothing" : fmt::format("{}", fmt::join(names, ", "));
}

/// The bisection's state: the options of every session, the trials so far (cached by the set
/// of names disabled) and the result being filled.
class Bisector {
 public:
  Bisector(const BisectOptimizersOptions& o, const CallContext& ctx, BisectOptimizersResult& r)
      : o_(o), ctx_(ctx), r_(r) {}

  /// The first comparison: the configuration (listing its transformers) against the baseline.
  /// Pins the samples and the baseline's outputs for every later session. Errors: as the
  /// header says.
  Status confirm();
  /// Whether the outputs agree with `names` disabled (one session, unless tried before).
  Expected<bool> agrees(const std::vector<std::string>& names);
  /// A 1-minimal subset of `items` whose disabling, with `fixed`, agrees: reduce's
  /// minimal_by_bisection (k culprits among N cost at most k (ceil(log2 N) + 1) sessions).
  Expected<std::vector<std::string>> minimal(const std::vector<std::string>& fixed,
                                             std::vector<std::string> items);
  /// Replaces a culprit that is a rule-based transformer by the rules that matter in it.
  Status open_rule_sets();
  /// Makes the culprits 1-minimal by test (drops one whose removal still agrees), then runs
  /// each culprit disabled alone, and enabled alone with the others disabled.
  Status measure_effects();
  /// Writes the optimized models with and without the culprits and compares their nodes.
  Status describe_culprits();
  /// The first original node whose output differs between `with` and `without` (the sessions
  /// with and without the culprits), among the tensors both optimized graphs keep: the original
  /// model with those tensors as extra outputs, written into `dir`, run on both.
  Status first_divergent(const LoadedModel& original, const onnx::GraphProto& optimized_with,
                         const onnx::GraphProto& optimized_without, const fs::path& dir,
                         BackendSpec with, BackendSpec without);
  /// Disables every candidate; while that disagrees and the session's log names transformers
  /// that changed the model in their place (a pattern another fusion takes over: disabling
  /// LayerNormFusionL2 lets SimplifiedLayerNormFusion fuse it), adds those and tries again.
  /// Returns whether the candidates, disabled together, restore agreement.
  Expected<bool> cover_candidates();

 private:
  /// One api::run of `spec` against the pinned baseline. Errors: those of api::run.
  Expected<RunResult> session(const BackendSpec& spec);
  /// api::run of `run` with ctx's cancel token and without its progress lines (the sessions'
  /// own would hide the bisection's). Errors: kCancelled, and those of api::run.
  Expected<RunResult> quiet_run(const RunOptions& run) const;
  /// A verdict line as the user wrote the specs (without list_transformers=on).
  std::string shown(std::string line) const;

  const BisectOptimizersOptions& o_;
  const CallContext& ctx_;
  BisectOptimizersResult& r_;
  RunOptions pinned_;  ///< the samples and baseline outputs of every session
  std::map<std::set<std::string>, size_t> tried_;  ///< disabled set -> index in r_.trials
  bool checking_ = false;  ///< sessions count as checks of the result, not as its search
  /// Graph outputs that differed in the first comparison, with the reason (the first sample's).
  std::map<std::string, std::string> failing_outputs_;
};

Expected<bool> Bisector::cover_candidates() {
  for (int round = 0; round < 8; ++round) {
    ODB_ASSIGN_OR_RETURN(bool ok, agrees(r_.candidates));
    if (ok) return true;
    const std::set<std::string> key(r_.candidates.begin(), r_.candidates.end());
    bool grew = false;
    for (const auto& t : r_.trials[tried_.at(key)].applied)
      if (!kAlwaysRun.count(t) && !key.count(t)) {
        r_.candidates.push_back(t);
        grew = true;
      }
    if (!grew) return false;
  }
  return false;
}

std::string Bisector::shown(std::string line) const {
  // The sessions' specs carry list_transformers=on, which the user did not write.
  static const std::string kListed = "list_transformers=on:";
  for (size_t at; (at = line.find(kListed)) != std::string::npos;) line.erase(at, kListed.size());
  static const std::string kListedLast = ":list_transformers=on";
  for (size_t at; (at = line.find(kListedLast)) != std::string::npos;)
    line.erase(at, kListedLast.size());
  return line;
}

Expected<RunResult> Bisector::quiet_run(const RunOptions& run) const {
  if (ctx_.cancel.cancelled()) return cancelled("bisect-optimizers cancelled");
  CallContext quiet;
  quiet.cancel = ctx_.cancel;
  return api::run(run, quiet);
}

Expected<RunResult> Bisector::session(const BackendSpec& spec) {
  RunOptions one = pinned_;
  one.backends = {spec};
  return quiet_run(one);
}

Status Bisector::confirm() {
  pinned_.model = o_.model;
  pinned_.inputs = o_.inputs;
  pinned_.comparison = o_.comparison;
  pinned_.timeout_seconds = o_.timeout_seconds;
  pinned_.max_memory = o_.max_memory;
  pinned_.max_iterations = o_.max_iterations;
  pinned_.layerwise.save_repro = "-";
  const bool golden = o_.comparison.golden_given();
  BackendSpec listed = o_.backend;
  listed.options["list_transformers"] = "on";
  RunOptions first = pinned_;
  first.backends =
      golden ? std::vector<BackendSpec>{listed} : std::vector<BackendSpec>{o_.against, listed};
  if (ctx_.progress) ctx_.progress("comparing " + o_.backend.to_string() + " with " + r_.against);
  ODB_ASSIGN_OR_RETURN(RunResult compared, api::run(first, ctx_));
  r_.confirm_sessions = static_cast<int>(first.backends.size());
  r_.messages = compared.messages;
  pinned_.loaded_model = r_.loaded_model = compared.model;  // every later session runs it
  for (const auto& sample : compared.report.samples)
    for (const auto& b : sample.backends)
      if (!b.ok)
        return backend_error(fmt::format("{} could not {} the model: {}", b.spec.to_string(),
                                         b.failed_stage, b.error));
  r_.difference = shown(compared.verdict_line());
  for (const auto& sample : compared.report.samples)
    for (const auto& c : sample.comparisons)
      if (!c.result.pass) failing_outputs_.emplace(c.output, c.result.reason);
  const BackendRun& tested = compared.report.samples.front().backends.back();
  for (const auto& t : tested.info.transformers_applied)
    if (!kAlwaysRun.count(t)) r_.candidates.push_back(t);
  r_.direct_candidates = r_.candidates.size();
  // A session config entry the configuration sets and the baseline does not is a candidate
  // too: removing it goes back to ONNX Runtime's default.
  for (const auto& [key, value] : o_.backend.options)
    if (key.rfind("config.", 0) == 0 && (golden || o_.against.option(key) != value))
      r_.candidates.push_back(key);
  if (!golden) {
    // Every later session: the same samples, compared with the baseline's outputs.
    pinned_.inputs = InputOptions{};
    pinned_.comparison.load_outputs.clear();
    pinned_.comparison.golden.clear();
    for (const auto& sample : compared.report.samples) {
      pinned_.inputs.samples.push_back(sample.inputs);
      pinned_.comparison.golden.push_back(sample.backends.front().outputs);
    }
  }
  r_.outcome = compared.verdict() == Verdict::kAgree ? BisectOutcome::kNoDifference
                                                     : BisectOutcome::kNotFound;
  // Nothing disabled is the first comparison itself: no session asks again.
  OptimizerTrial none;
  none.agrees = r_.outcome == BisectOutcome::kNoDifference;
  none.line = r_.difference;
  tried_[{}] = r_.trials.size();
  r_.trials.push_back(std::move(none));
  return Status::ok();
}

Expected<bool> Bisector::agrees(const std::vector<std::string>& names) {
  const std::set<std::string> key(names.begin(), names.end());
  if (auto it = tried_.find(key); it != tried_.end()) return r_.trials[it->second].agrees;
  if (ctx_.progress)
    ctx_.progress(fmt::format("session {}: disabling {}",
                              r_.search_sessions + r_.check_sessions + 1, joined(names)));
  ODB_ASSIGN_OR_RETURN(RunResult trial, session(with_disabled(o_.backend, names)));
  ++(checking_ ? r_.check_sessions : r_.search_sessions);
  OptimizerTrial t;
  t.disabled = names;
  t.agrees = trial.verdict() == Verdict::kAgree;
  t.line = shown(trial.verdict_line());
  if (!trial.report.samples.empty() && !trial.report.samples.front().backends.empty())
    t.applied = trial.report.samples.front().backends.back().info.transformers_applied;
  tried_[key] = r_.trials.size();
  r_.trials.push_back(std::move(t));
  return r_.trials.back().agrees;
}

Expected<std::vector<std::string>> Bisector::minimal(const std::vector<std::string>& fixed,
                                                     std::vector<std::string> items) {
  // "Fails" in the reducer's terms is "restores agreement" here, taken as monotone (disabling
  // more does not bring a difference back); measure_effects checks the result by test, as
  // transformers that take over each other's patterns can break that.
  const std::function<Expected<bool>(const std::vector<std::string>&)> restores =
      [&](const std::vector<std::string>& subset) -> Expected<bool> {
    std::vector<std::string> names = fixed;
    names.insert(names.end(), subset.begin(), subset.end());
    return agrees(names);
  };
  return reduce::minimal_by_bisection<std::string>(std::move(items), restores);
}

Status Bisector::open_rule_sets() {
  std::vector<std::string> culprits = r_.culprits;
  for (const auto& c : r_.culprits) {
    std::vector<std::string> rules = rules_of_transformer(c);
    if (rules.empty()) continue;
    std::vector<std::string> others = all_but(culprits, c);
    std::vector<std::string> all = others;
    all.insert(all.end(), rules.begin(), rules.end());
    ODB_ASSIGN_OR_RETURN(bool ok, agrees(all));
    if (!ok) continue;  // its rules by name do not cover it: keep the whole set
    ODB_ASSIGN_OR_RETURN(std::vector<std::string> needed, minimal(others, rules));
    others.insert(others.end(), needed.begin(), needed.end());
    culprits = std::move(others);
  }
  r_.culprits = std::move(culprits);
  return Status::ok();
}

Status Bisector::measure_effects() {
  checking_ = true;
  // The search assumes that disabling more never brings a difference back; transformers that
  // take over each other's patterns can break that, so a culprit whose removal still agrees is
  // dropped until none is (the set is then 1-minimal by test, not by assumption).
  for (bool dropped = true; dropped && r_.culprits.size() > 1;) {
    dropped = false;
    for (size_t i = 0; i < r_.culprits.size() && !dropped; ++i) {
      std::vector<std::string> rest = all_but(r_.culprits, r_.culprits[i]);
      ODB_ASSIGN_OR_RETURN(bool ok, agrees(rest));
      if (!ok) continue;
      add_note(r_.messages, "'" + r_.culprits[i] +
                                "' left the culprits: disabling the others alone restores "
                                "agreement (ONNX Runtime's transformers interact)");
      r_.culprits = std::move(rest);
      dropped = true;
    }
  }
  for (const auto& c : r_.culprits) {
    CulpritEffect e;
    e.name = c;
    ODB_ASSIGN_OR_RETURN(e.alone_restores, agrees({c}));
    e.alone = r_.trials[tried_.at({c})].line;
    if (r_.culprits.size() > 1) {
      const std::vector<std::string> rest = all_but(r_.culprits, c);
      ODB_ASSIGN_OR_RETURN(bool rest_agrees, agrees(rest));
      e.reenabled_breaks = !rest_agrees;
      e.reenabled = r_.trials[tried_.at(std::set<std::string>(rest.begin(), rest.end()))].line;
    }
    r_.effects.push_back(std::move(e));
  }
  return Status::ok();
}

/// Node keys (domain, op type, outputs) and the tensors of one optimized graph.
struct GraphIndex {
  static std::string key(const onnx::NodeProto& n) {
    std::string k = n.domain() + "|" + n.op_type();
    for (const auto& o : n.output()) k += "|" + o;
    return k;
  }
  explicit GraphIndex(const onnx::GraphProto& g) {
    for (int i = 0; i < g.node_size(); ++i) {
      keys.insert(key(g.node(i)));
      for (const auto& v : g.node(i).output()) {
        values.insert(v);
        made_by.emplace(v, i);
      }
    }
    for (const auto& v : g.input()) values.insert(v.name());
    for (const auto& v : g.initializer()) values.insert(v.name());
  }
  std::set<std::string> keys, values;
  std::map<std::string, int> made_by;  ///< tensor -> index of the node making it
};

/// The nodes of `with` (optimized with the culprits) that `without` lacks, joined where one reads
/// another's output (a fused node and the Transposes ONNX Runtime put around it), each group with
/// the nodes of `without` it stands for: found backwards from the group's outputs through tensors
/// `with` lacks, and named in `original` where a node there makes the same first output. Nodes
/// of `without` that no group stands for and `with` lacks were removed.
void compare_optimized(const onnx::GraphProto& original, const onnx::GraphProto& with,
                       const onnx::GraphProto& without, BisectOptimizersResult& r) {
  const GraphIndex w(with), wo(without), orig(original);
  // An original node by its name and op type, where the name is unique (ONNX Runtime keeps
  // names, while its inserted Casts can rename the outputs).
  std::map<std::string, int> by_name;
  for (int i = 0; i < original.node_size(); ++i) {
    const auto& n = original.node(i);
    if (n.name().empty()) continue;
    const std::string k = n.op_type() + "|" + n.name();
    if (!by_name.emplace(k, i).second) by_name[k] = -1;
  }
  // A node of `without` as (original index, or the node count plus its index in `without`;
  // labels sort that way) and its label.
  auto label_of = [&](int j) -> std::pair<int, std::string> {
    const auto& n = without.node(j);
    int i = -1;
    if (n.output_size() > 0)
      if (auto it = orig.made_by.find(n.output(0)); it != orig.made_by.end()) i = it->second;
    if (i < 0 && !n.name().empty())
      if (auto it = by_name.find(n.op_type() + "|" + n.name()); it != by_name.end()) i = it->second;
    if (i >= 0) return {i, node_label(original.node(i), i)};
    return {original.node_size() + j, "ONNX Runtime's " + node_label(n, j)};
  };
  std::vector<int> fresh;  // nodes of `with` that `without` lacks
  std::map<std::string, size_t> fresh_output;
  for (int i = 0; i < with.node_size(); ++i)
    if (!wo.keys.count(GraphIndex::key(with.node(i)))) {
      for (const auto& v : with.node(i).output()) fresh_output[v] = fresh.size();
      fresh.push_back(i);
    }
  std::vector<size_t> group_of(fresh.size());
  for (size_t k = 0; k < fresh.size(); ++k) group_of[k] = k;
  std::function<size_t(size_t)> root = [&](size_t k) {
    return group_of[k] == k ? k : group_of[k] = root(group_of[k]);
  };
  for (size_t k = 0; k < fresh.size(); ++k)
    for (const auto& in : with.node(fresh[k]).input())
      if (auto it = fresh_output.find(in); it != fresh_output.end())
        group_of[root(k)] = root(it->second);
  std::vector<bool> claimed(static_cast<size_t>(without.node_size()));
  for (size_t g = 0; g < fresh.size(); ++g) {
    if (root(g) != g) continue;
    FusedNode f;
    std::vector<std::string> todo;
    for (size_t k = 0; k < fresh.size(); ++k) {
      if (root(k) != g) continue;
      const auto& n = with.node(fresh[k]);
      f.node += (f.node.empty() ? "" : " + ") + node_label(n, fresh[k]);
      todo.insert(todo.end(), n.output().begin(), n.output().end());
    }
    std::vector<std::pair<int, std::string>> replaced;
    while (!todo.empty()) {
      const std::string t = todo.back();
      todo.pop_back();
      auto it = wo.made_by.find(t);
      if (it == wo.made_by.end() || claimed[static_cast<size_t>(it->second)]) continue;
      const int j = it->second;
      if (w.keys.count(GraphIndex::key(without.node(j)))) continue;  // still there
      claimed[static_cast<size_t>(j)] = true;
      replaced.push_back(label_of(j));
      for (const auto& in : without.node(j).input())
        if (!in.empty() && !w.values.count(in)) todo.push_back(in);
    }
    std::sort(replaced.begin(), replaced.end());
    replaced.erase(std::unique(replaced.begin(), replaced.end()), replaced.end());
    for (auto& [index, label] : replaced) f.replaced.push_back(std::move(label));
    r.fused.push_back(std::move(f));
  }
  for (int j = 0; j < without.node_size(); ++j)
    if (!claimed[static_cast<size_t>(j)] && !w.keys.count(GraphIndex::key(without.node(j))))
      r.removed.push_back(label_of(j).second);
}

Status Bisector::describe_culprits() {
  TempDir tmp;
  fs::path dir = o_.save_models;
  if (dir.empty()) {
    ODB_ASSIGN_OR_RETURN(tmp, TempDir::create("onnxdbg-bisect-"));
    dir = tmp.path();
  } else {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
      return invalid_argument("cannot create the folder '" + dir.string() + "': " + ec.message());
  }
  const fs::path with_path = dir / "optimized_with_culprits.onnx";
  const fs::path without_path = dir / "optimized_without_culprits.onnx";
  BackendSpec with = o_.backend, without = with_disabled(o_.backend, r_.culprits);
  with.options["optimized_model"] = with_path.string();
  without.options["optimized_model"] = without_path.string();
  if (ctx_.progress) ctx_.progress("writing the optimized models");
  for (const BackendSpec* s : {&with, &without}) {
    ODB_ASSIGN_OR_RETURN(RunResult written, session(*s));
    ++r_.model_sessions;
    (void)written;
  }
  const LoadedModel& original = pinned_.loaded_model.loaded();
  auto a = load_model(with_path), b = load_model(without_path);
  if (!a || !b) {
    add_note(r_.messages,
             "ONNX Runtime did not write both optimized models, so the culprits' "
             "nodes are not named");
    return Status::ok();
  }
  compare_optimized(original.proto.graph(), a->proto.graph(), b->proto.graph(), r_);
  ODB_RETURN_IF_ERROR(
      first_divergent(original, a->proto.graph(), b->proto.graph(), dir, with, without));
  if (!o_.save_models.empty()) {
    r_.optimized_with = with_path;
    r_.optimized_without = without_path;
  }
  return Status::ok();
}

/// `model` with every tensor both optimized graphs keep as an extra graph output (typed by ONNX
/// shape inference); `made_by` gets those tensors, graph outputs included, with their node.
onnx::ModelProto with_kept_outputs(const onnx::ModelProto& model, const GraphIndex& with,
                                   const GraphIndex& without, std::map<std::string, int>& made_by) {
  const onnx::GraphProto& g = model.graph();
  std::set<std::string> outputs;
  for (const auto& o : g.output()) outputs.insert(o.name());
  const InferredTypes types = infer_shapes(model);
  onnx::ModelProto marked = model;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& v : g.node(i).output()) {
      if (v.empty() || !with.values.count(v) || !without.values.count(v)) continue;
      made_by.emplace(v, i);
      if (outputs.count(v)) continue;
      auto t = types.types.find(v);
      if (t == types.types.end() || !t->second.has_tensor_type()) continue;
      auto* out = marked.mutable_graph()->add_output();
      out->set_name(v);
      *out->mutable_type() = t->second;
    }
  return marked;
}

Status Bisector::first_divergent(const LoadedModel& original,
                                 const onnx::GraphProto& optimized_with,
                                 const onnx::GraphProto& optimized_without, const fs::path& dir,
                                 BackendSpec with, BackendSpec without) {
  if (!external_data_locations(original.proto.graph()).empty()) {
    add_note(r_.messages,
             "the first divergent node is not looked for in a model with external "
             "data (its copy with extra outputs would need the weights beside it)");
    return Status::ok();
  }
  const onnx::GraphProto& g = original.proto.graph();
  std::map<std::string, int> made_by;  // the tensors compared -> their original node
  const onnx::ModelProto marked = with_kept_outputs(original.proto, GraphIndex(optimized_with),
                                                    GraphIndex(optimized_without), made_by);
  const fs::path path = dir / "marked.onnx";
  ODB_RETURN_IF_ERROR(save_model(marked, path));
  // The sessions' samples and limits, the two configurations compared with each other.
  RunOptions both = pinned_;
  both.model = path;
  both.loaded_model = Model();  // the marked model, not the original every other session runs
  both.comparison.load_outputs.clear();
  both.comparison.golden.clear();
  with.options.erase("optimized_model");
  without.options.erase("optimized_model");
  both.backends = {without, with};
  if (ctx_.progress) ctx_.progress("comparing the tensors both optimized models keep");
  ODB_ASSIGN_OR_RETURN(RunResult run, quiet_run(both));
  r_.model_sessions += 2;
  for (const auto& sample : run.report.samples)
    for (const auto& b : sample.backends)
      if (!b.ok) {
        add_note(r_.messages, "the first divergent node was not looked for: " + b.spec.to_string() +
                                  " could not " + b.failed_stage +
                                  " the model with the compared tensors as outputs: " + b.error);
        return Status::ok();
      }
  int first = -1;
  std::string detail;
  for (const auto& sample : run.report.samples)
    for (const auto& c : sample.comparisons) {
      // Where the difference starts, even below the tolerance: a fused node's rounding is
      // often small there and grows downstream.
      auto it = made_by.find(c.output);
      const bool differs = !c.result.pass || c.result.max_abs_error > 0;
      if (!differs || it == made_by.end() || (first >= 0 && it->second >= first)) continue;
      first = it->second;
      detail = c.result.pass ? fmt::format(
                                   "its output '{}' is the first to differ, by up to {:.3g} "
                                   "(within the tolerance there)",
                                   c.output, c.result.max_abs_error)
                             : fmt::format("its output '{}' is the first to differ: {}", c.output,
                                           c.result.reason);
    }
  if (first < 0) {
    // Asking ONNX Runtime for a tensor as an output can stop a transformer from touching it
    // (the pair DoubleQDQPairsRemover folds must have no other reader): then only the graph
    // outputs that differed say where.
    for (const auto& [name, reason] : failing_outputs_) {
      auto it = made_by.find(name);
      if (it == made_by.end() || (first >= 0 && it->second >= first)) continue;
      first = it->second;
      detail = fmt::format(
          "its output '{}' differs: {} (the tensors before it could not be compared: asked for "
          "as outputs, they stop ONNX Runtime from applying the culprits)",
          name, reason);
    }
  }
  if (first < 0) return Status::ok();
  r_.first_divergent_node = node_label(g.node(first), first);
  r_.first_divergent_detail = detail;
  return Status::ok();
}

/// The verdict sentence of a finished bisection.
std::string verdict_line_of(const BisectOptimizersResult& r) {
  switch (r.outcome) {
    case BisectOutcome::kNoDifference:
      return fmt::format("no optimization changes the outputs: {} agrees with {} ({})", r.backend,
                         r.against, r.difference);
    case BisectOutcome::kNotFound:
      return r.candidates.empty()
                 ? fmt::format(
                       "ONNX Runtime's log names no graph transformer that changed the "
                       "model under {}, so the difference with {} is not a graph "
                       "optimization's (a kernel's, or the baseline's)",
                       r.backend, r.against)
                 : fmt::format(
                       "disabling all {} graph transformers that changed the model ({}) "
                       "does not restore agreement with {}: the difference is not theirs "
                       "alone (a kernel's, or a transformer that cannot be disabled)",
                       r.candidates.size(), joined(r.candidates), r.against);
    case BisectOutcome::kFound:
      break;
  }
  return fmt::format("{} {} the difference: {}:disable={} agrees with {}",
                     r.culprits.size() == 1 ? r.culprits.front() : joined(r.culprits),
                     r.culprits.size() == 1 ? "causes" : "together cause", r.backend,
                     fmt::join(r.culprits, "+"), r.against);
}

}  // namespace

Expected<BisectOptimizersResult> bisect_optimizers(const BisectOptimizersOptions& o,
                                                   const CallContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  BisectOptimizersOptions opt = o;
  if (opt.backend.name.empty()) opt.backend = {"onnxruntime", {{"opt", "all"}}};
  if (opt.against.name.empty()) opt.against = {"onnxruntime", {{"opt", "disabled"}}};
  // Bisecting needs a backend that names the transformers it applied and can disable them.
  if (!backend_has_option(opt.backend.name, "list_transformers") ||
      !backend_has_option(opt.backend.name, "disable"))
    return invalid_argument(
        "bisect-optimizers bisects ONNX Runtime's graph optimizations: "
        "--backend must be onnxruntime[:options], not '" +
        opt.backend.to_string() + "'");
  ODB_RETURN_IF_ERROR(validate_backend_spec(opt.backend));
  ODB_RETURN_IF_ERROR(validate_backend_spec(opt.against));
  BisectOptimizersResult r;
  r.model = o.model.string();
  r.backend = opt.backend.to_string();
  r.against = !o.comparison.golden_given() ? opt.against.to_string()
              : o.comparison.load_outputs.empty()
                  ? std::string("the golden outputs given")
                  : "the golden outputs of " + o.comparison.load_outputs.string();
  Bisector b(opt, ctx, r);
  ODB_RETURN_IF_ERROR(b.confirm());
  if (r.outcome == BisectOutcome::kNotFound && !r.candidates.empty()) {
    ODB_ASSIGN_OR_RETURN(bool restorable, b.cover_candidates());
    if (restorable) {
      ODB_ASSIGN_OR_RETURN(r.culprits, b.minimal({}, r.candidates));
      r.search_found = r.culprits.size();
      r.session_bound =
          2.0 * static_cast<double>(r.search_found) *
              std::log2(std::max<double>(2, static_cast<double>(r.candidates.size()))) +
          2;
      ODB_RETURN_IF_ERROR(b.open_rule_sets());
      ODB_RETURN_IF_ERROR(b.measure_effects());
      r.outcome = BisectOutcome::kFound;
      ODB_RETURN_IF_ERROR(b.describe_culprits());
    }
  }
  r.verdict_line = verdict_line_of(r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace onnxdbg::api
