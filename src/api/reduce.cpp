// api::reduce: prepares the model and its input samples, makes the oracle (check command,
// built-in or a caller's function, each stoppable by the cancel token) and runs the reducer
// (include/onnxdbg/reduce.h).
#include "onnxdbg/reduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "backends/backend_limits.h"
#include "batch/executor.h"
#include "comparator/input_gen.h"
#include "core/atomic_file.h"
#include "core/run_limits.h"
#include "core/temp_dir.h"
#include "data/npy.h"
#include "data/npz.h"
#include "data/test_data.h"
#include "model/graph.h"
#include "model/model.h"
#include "reduce/oracle.h"
#include "reduce/reduce.h"
#include "reduce/strategies/strategies.h"
#include "surgeon/surgeon.h"
#include "surgeon/taken_branches.h"

namespace onnxdbg::api {

namespace {

namespace fs = std::filesystem;

/// A caller's function as an oracle.
class FunctionOracle : public reduce::Oracle {
 public:
  FunctionOracle(OracleFn fn, std::string description)
      : fn_(std::move(fn)), description_(std::move(description)) {}
  std::string describe() const override { return description_; }
  Expected<reduce::OracleVerdict> test(const reduce::BuiltCandidate& candidate, int) override {
    OracleCandidate c;
    c.bytes = candidate.bytes;
    c.base_dir = candidate.base_dir;
    c.inputs = candidate.inputs;
    c.outputs = candidate.outputs;
    c.feeds = &candidate.feeds;
    c.built = &candidate;
    ODB_ASSIGN_OR_RETURN(bool fails, fn_(c));
    reduce::OracleVerdict v;
    v.fails = fails;
    v.detail = fails ? "the oracle says it fails" : "the oracle says it passes";
    return v;
  }

 private:
  OracleFn fn_;
  std::string description_;
};

/// Any oracle, stopped by the cancel token before each candidate it would test.
class CancellableOracle : public reduce::Oracle {
 public:
  CancellableOracle(std::unique_ptr<reduce::Oracle> inner, CancelToken token)
      : inner_(std::move(inner)), token_(std::move(token)) {}
  std::string describe() const override { return inner_->describe(); }
  int max_parallel() const override { return inner_->max_parallel(); }
  bool needs_values() const override { return inner_->needs_values(); }
  Expected<reduce::OracleVerdict> test(const reduce::BuiltCandidate& candidate, int slot) override {
    if (token_.cancelled()) return cancelled("reduction cancelled");
    return inner_->test(candidate, slot);
  }
  void anchor(const reduce::BuiltCandidate& original, reduce::OracleVerdict& verdict) override {
    if (!token_.cancelled()) inner_->anchor(original, verdict);
  }

 private:
  std::unique_ptr<reduce::Oracle> inner_;
  CancelToken token_;
};

/// Options that are wrong whatever the model, refused before it is loaded.
Status check_options(const ReduceOptions& o) {
  const int oracles = !o.check.command.empty() + !o.builtin.fail_on.empty() + bool(o.oracle);
  if (oracles == 0)
    return invalid_argument(
        "say what failing means: --check CMD... (an external command) or --fail-on "
        "mismatch|error|nan (built in)");
  if (oracles > 1) return invalid_argument("use either --check or --fail-on, not both");
  if (o.executor != "local" && o.executor != "ray")
    return invalid_argument("--executor " + o.executor + ": use local or ray");
  if (o.executor == "ray" && o.check.command.empty())
    return invalid_argument(
        "--executor ray runs --check commands as Ray tasks; the built-in oracle (--fail-on) and a "
        "Python oracle run in this process: give the check as a command, such as --check onnxdbg "
        "run onnxdbg_debug.onnx ...");
  if (o.jobs < 1) return invalid_argument("-j must be at least 1");
  if (o.iterations < 1) return invalid_argument("--iterations must be at least 1");
  return Status::ok();
}

/// Loaded input values: graph inputs make sample 0; other tensors of a layerwise .npz (inputs
/// plus intermediate tensors, as `onnxdbg run --save-outputs` or Polygraphy's `data to-input`
/// write) become values the user provides (golden values).
Status load_input_values(const ReduceOptions& o, reduce::Original& original) {
  Expected<TensorMap> t = o.load_inputs.extension() == ".npz"
                              ? load_npz(o.load_inputs)
                              : load_tensors(o.load_inputs, original.model.graph());
  if (!t) return t.status();
  TensorMap sample;
  const auto inputs = model_inputs(original.model.graph());
  for (auto& entry : *t) {
    const std::string& name = entry.first;
    const bool is_input = std::any_of(inputs.begin(), inputs.end(),
                                      [&](const auto& sig) { return sig.name == name; });
    (is_input ? sample : original.provided).insert_or_assign(name, std::move(entry.second));
  }
  original.samples.push_back(std::move(sample));
  return Status::ok();
}

/// Generated samples with seeds seed, seed+1, ...; a check command may not need values, so
/// there a failure is a warning and candidates get types only.
Status generate_input_values(const ReduceOptions& o, reduce::Original& original,
                             Messages& messages) {
  InputGenOptions gen = o.generate;
  if (gen.max_memory == 0) gen.max_memory = o.max_memory;
  for (int i = 0; i < o.iterations; ++i) {
    gen.seed = o.generate.seed + static_cast<uint64_t>(i);
    auto t = generate_inputs(original.model.graph(), gen);
    if (!t) {
      if (!o.check.command.empty() || o.oracle) {
        add_warning(messages,
                    "no input values (" + t.status().message() + "); candidates get types only");
        return Status::ok();
      }
      return Status(t.status()).with_context("generating inputs (use --model-input-shapes)");
    }
    original.samples.push_back(std::move(*t));
  }
  return Status::ok();
}

/// An Original of `model` (external data read from `base_dir`) with the options' switches.
reduce::Original original_of(const ReduceOptions& o, onnx::ModelProto model,
                             const fs::path& base_dir) {
  reduce::Original original;
  original.model = std::move(model);
  original.base_dir = base_dir;
  original.fallback_shapes = o.fallback_shapes;
  original.keep_inputs = o.keep_inputs;
  original.keep_outputs = o.keep_outputs;
  return original;
}

/// ReduceResult::original of `original`: its model, named by the options' path, its external data
/// where the original's is.
Model result_model(const ReduceOptions& o, reduce::Original&& original) {
  return Model(LoadedModel{std::move(original.model), o.model, original.base_dir, {}});
}

/// prepare_original under the options' --timeout, --max-memory and --max-iterations (for the
/// reference runs on every sample, together), ctx's cancel token and progress (a golden run past
/// 10 s says where it is).
Status prepare_with_limits(const ReduceOptions& o, const CallContext& ctx,
                           reduce::Original& original) {
  RunLimits golden_limits;
  golden_limits.timeout_seconds = o.timeout_seconds;
  golden_limits.max_memory = o.max_memory;
  golden_limits.max_iterations = o.max_iterations;
  golden_limits.cancel = ctx.cancel.flag();
  if (ctx.progress) golden_limits.progress = &ctx.progress;
  ScopedRunLimits limits(golden_limits);
  return prepare_original(original);
}

/// The model being reduced with its samples and golden values.
Expected<reduce::Original> prepare(const ReduceOptions& o, const CallContext& ctx,
                                   Messages& messages) {
  ODB_ASSIGN_OR_RETURN(LoadedModel loaded, load_model(o.model));
  for (const auto& w : loaded.warnings) add_warning(messages, w);
  reduce::Original original = original_of(o, std::move(loaded.proto), loaded.base_dir);
  if (!o.model_input_shapes.empty())
    if (Status st = surgeon::override_input_shapes(original.model, o.model_input_shapes); !st)
      return st.with_context("--model-input-shapes");
  Status st = o.load_inputs.empty() ? generate_input_values(o, original, messages)
                                    : load_input_values(o, original);
  if (!st) return st;
  if (ctx.progress) ctx.progress("computing golden values on the reference");
  if (Status p = prepare_with_limits(o, ctx, original); !p) return p;
  if (!original.golden_error.empty())
    add_warning(messages,
                "the reference cannot run the model, so candidates get no golden values (only "
                "types): " +
                    original.golden_error);
  return original;
}

/// The oracle the options ask for, wrapped so that the cancel token stops it.
Expected<std::unique_ptr<reduce::Oracle>> make_oracle(const ReduceOptions& o,
                                                      const reduce::Original& original,
                                                      const fs::path& work_dir,
                                                      const CallContext& ctx) {
  std::unique_ptr<reduce::Oracle> inner;
  if (!o.check.command.empty()) {
    reduce::CheckOptions co = o.check;
    co.jobs = o.jobs;
    co.work_dir = work_dir;
    co.cancelled = [token = ctx.cancel] { return token.cancelled(); };
    if (o.executor == "ray") {
      ODB_ASSIGN_OR_RETURN(
          std::unique_ptr<batch::Executor> ray,
          batch::connect_ray(o.address, o.python, "", 0, 1, work_dir / "ray-executor.log"));
      co.executor = std::make_shared<batch::SharedExecutor>(std::move(ray));
    }
    ODB_ASSIGN_OR_RETURN(inner, reduce::make_check_oracle(co));
  } else if (!o.builtin.fail_on.empty()) {
    if (original.golden.empty())
      return invalid_argument(
          "built-in oracles feed candidates the golden values of the reference, which cannot "
          "run this model; use --check instead");
    reduce::BuiltinOptions bo;
    bo.fail_on = o.builtin.fail_on;
    bo.backends = o.builtin.backends;
    if (bo.backends.empty()) {
      ODB_ASSIGN_OR_RETURN(bo.backends, parse_backend_list(std::string(option_defaults::backends)));
    }
    apply_backend_limits(bo.backends, o.timeout_seconds, o.max_memory, o.max_iterations);
    bo.tolerance = o.builtin.tolerance;
    bo.error_stat = o.builtin.error_stat;
    bo.fail_regex = o.builtin.fail_regex;
    bo.work_dir = work_dir;
    bo.jobs = o.jobs;
    ODB_ASSIGN_OR_RETURN(inner, reduce::make_builtin_oracle(bo));
  } else {
    inner = std::make_unique<FunctionOracle>(o.oracle, o.oracle_description);
  }
  return std::unique_ptr<reduce::Oracle>(
      std::make_unique<CancellableOracle>(std::move(inner), ctx.cancel));
}

/// `late` merged into `early`, the report of the reduction it continued: counts add up, the
/// result and notes are late's (early's notes first), nodes_before stays early's.
reduce::ReduceReport merge_reports(const reduce::ReduceReport& early, reduce::ReduceReport late) {
  late.nodes_before = early.nodes_before;
  late.original_detail = early.original_detail;
  late.passes += early.passes;
  late.oracle_calls += early.oracle_calls;
  late.cache_hits += early.cache_hits;
  late.invalid_skipped += early.invalid_skipped;
  for (const auto& [reason, n] : early.invalid_reasons) late.invalid_reasons[reason] += n;
  late.failed_differently += early.failed_differently;
  late.timeouts += early.timeouts;
  late.seconds += early.seconds;
  late.saw_passing = late.saw_passing || early.saw_passing;
  std::vector<reduce::StrategyStats> strategies = early.strategies;
  for (const auto& s : late.strategies) {
    auto it = std::find_if(strategies.begin(), strategies.end(),
                           [&](const reduce::StrategyStats& e) { return e.name == s.name; });
    if (it == strategies.end()) {
      strategies.push_back(s);
      continue;
    }
    it->runs += s.runs;
    it->oracle_calls += s.oracle_calls;
    it->nodes_removed += s.nodes_removed;
    it->seconds += s.seconds;
  }
  late.strategies = std::move(strategies);
  std::vector<std::string> notes = early.notes;
  notes.insert(notes.end(), late.notes.begin(), late.notes.end());
  late.notes = std::move(notes);
  if (late.signature.empty()) late.signature = early.signature;
  return late;
}

/// Initializers of `reduced` (a reduction's result) that `root` (the model it was reduced from)
/// does not have: boundary values the reduction froze. They become graph inputs again, their
/// value added to every sample, so that a reduction starting from `reduced` can cut the graph
/// after the nodes that read them (a value computed from initializers alone is never made an
/// output). Errors: those of reading an initializer.
Status unfreeze_boundary_values(const onnx::ModelProto& root, onnx::ModelProto& reduced,
                                const fs::path& base_dir, std::vector<TensorMap>& samples) {
  NameSet known;
  walk_graphs(root.graph(), [&](const GraphVisit& v) {
    for (const auto& n : initializer_names(*v.graph)) known.insert(n);
  });
  const NameSet inputs = graph_input_names(reduced.graph());
  onnx::GraphProto* g = reduced.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  for (auto& init : *g->mutable_initializer()) {
    if (known.count(init.name()) || inputs.count(init.name())) {
      *kept.Add() = std::move(init);
      continue;
    }
    ODB_ASSIGN_OR_RETURN(Tensor value, tensor_from_proto(init, base_dir));
    auto* in = g->add_input();
    in->set_name(init.name());
    auto* type = in->mutable_type()->mutable_tensor_type();
    type->set_elem_type(init.data_type());
    type->mutable_shape();  // a scalar has a shape with no dims
    for (int64_t d : init.dims()) type->mutable_shape()->add_dim()->set_dim_value(d);
    for (auto& sample : samples) sample[init.name()] = value;
  }
  g->mutable_initializer()->Swap(&kept);
  return Status::ok();
}

/// Rounds of reduce_inside_branches at most (each removes one If or Loop).
constexpr int kMaxBranchRounds = 16;

/// One way to replace a control-flow node of the reduced model (reduce_inside_branches).
struct Replacement {
  std::string label;  ///< "the then_branch of #0 If 'c'", "the body of #2 Loop 'l'"
  std::string how;    ///< "the If was replaced by it", "the Loop was unrolled into 3 iterations"
  Expected<onnx::ModelProto> model;
};

/// The replacements of main-graph node `i` of `reduced` to try: an If's then branch, then its
/// else branch (surgeon::inline_if_branch); a Loop or Scan unrolled into the iterations it runs
/// on the first sample (surgeon::observe_control_flow, asked once per round through `observed`),
/// unless it runs none or would unroll into more than surgeon::kMaxUnrolledNodes nodes.
std::vector<Replacement> replacements_of(const LoadedModel& reduced, int i,
                                         const std::vector<TensorMap>& samples,
                                         std::optional<surgeon::ControlFlowRun>& observed) {
  const onnx::NodeProto& n = reduced.proto.graph().node(i);
  std::vector<Replacement> out;
  const bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx";
  if (onnx_domain && n.op_type() == "If") {
    for (bool then_branch : {true, false})
      out.push_back({std::string("the ") + (then_branch ? "then_branch" : "else_branch") + " of " +
                         node_label(n, i),
                     "the If was replaced by it",
                     surgeon::inline_if_branch(reduced.proto, i, then_branch)});
  } else if (onnx_domain && (n.op_type() == "Loop" || n.op_type() == "Scan") && !samples.empty()) {
    if (!observed) {
      auto run = surgeon::observe_control_flow(reduced.proto, reduced.base_dir, samples.front());
      observed = run ? std::move(*run) : surgeon::ControlFlowRun{};
    }
    auto it = observed->iterations.find(i);
    if (it != observed->iterations.end() && it->second >= 1 &&
        surgeon::unrolled_nodes(n, it->second) <= surgeon::kMaxUnrolledNodes)
      out.push_back({"the body of " + node_label(n, i),
                     fmt::format("the {} was unrolled into its {} iteration{}", n.op_type(),
                                 it->second, it->second == 1 ? "" : "s"),
                     n.op_type() == "Loop"
                         ? surgeon::unroll_loop(reduced.proto, i, it->second)
                         : surgeon::unroll_scan(reduced.proto, i, observed->scan_input_shapes[i])});
  }
  return out;
}

/// Makes the reduction of a replacement (`rep`, its model written at `written`) the result: the
/// model becomes o.output (self-contained: it was written outside the original's folder), the
/// reports are merged with a note saying where the failure is, and `next` becomes the original.
Status adopt_replacement(const ReduceOptions& o, const fs::path& written, const Replacement& r,
                         reduce::ReduceReport rep, reduce::Original& next, int64_t& spent,
                         ReduceResult& out) {
  ODB_ASSIGN_OR_RETURN(const std::string bytes, read_file_bytes(written));
  if (Status st = write_file_atomic(o.output, bytes); !st)
    return st.with_context("while writing " + o.output.string());
  // The replacement's reduction saw the oracle pass: the note that it never did, which the first
  // reduction (of the If or Loop whole) may have made, no longer holds.
  if (rep.saw_passing)
    std::erase_if(out.report->notes, [](const std::string& n) {
      return n.rfind("the oracle failed every one of the", 0) == 0;
    });
  reduce::ReduceReport merged = merge_reports(*out.report, std::move(rep));
  merged.output = o.output.string();
  merged.oracle_calls += spent;
  spent = 0;
  merged.notes.insert(
      merged.notes.begin() + static_cast<std::ptrdiff_t>(out.report->notes.size()),
      "the failure is inside " + r.label + ": " + r.how + ", and the result reduced again");
  out.report = std::move(merged);
  out.original = result_model(o, std::move(next));
  return Status::ok();
}

/// The node replacements of one round of reduce_inside_branches: each replacement of each node of
/// the reduced model (at o.output) is reduced on its own, fed `samples`; the first the oracle
/// fails as the original failed is adopted (true). Replacements that pass add their oracle calls
/// to `spent`; an error sets out.stopped (false).
bool replace_one(const ReduceOptions& o, const CallContext& ctx, reduce::Oracle& oracle,
                 const reduce::ReduceOptions& ro, const fs::path& work, int round,
                 const LoadedModel& reduced, const std::vector<TensorMap>& samples, int64_t& spent,
                 ReduceResult& out) {
  std::optional<surgeon::ControlFlowRun> observed;
  for (int i = 0; i < reduced.proto.graph().node_size(); ++i) {
    for (Replacement& r : replacements_of(reduced, i, samples, observed)) {
      if (!r.model) continue;
      reduce::Original next = original_of(o, std::move(*r.model), reduced.base_dir);
      next.samples = samples;
      if (next.samples.empty())
        if (Status st = generate_input_values(o, next, out.messages); !st) return false;
      if (Status st = prepare_with_limits(o, ctx, next); !st) continue;
      reduce::ReduceOptions again = ro;
      again.reducer.journal = work / ("branch-" + std::to_string(round) + ".journal");
      // Written apart, so that a replacement that fails otherwise leaves o.output as it was.
      again.reducer.output = work / ("branch-" + std::to_string(round) + ".onnx");
      again.reducer.resume = false;
      again.min_good.clear();
      again.note_if_all_fail = false;
      if (ctx.progress) ctx.progress("replacing " + r.label);
      auto rep = reduce::reduce_model(next, oracle, again);
      if (!rep) {
        out.stopped = Status(rep.status()).with_context("while reducing " + r.label);
        out.best_so_far = true;
        return false;
      }
      const bool same_failure = o.any_failure || rep->signature.empty() ||
                                out.report->signature.empty() ||
                                rep->signature == out.report->signature;
      if (!rep->original_fails || !same_failure) {
        spent += rep->oracle_calls;
        continue;
      }
      if (Status st =
              adopt_replacement(o, again.reducer.output, r, std::move(*rep), next, spent, out);
          !st) {
        out.stopped = std::move(st);
        out.best_so_far = true;
        return false;
      }
      return true;
    }
  }
  return false;
}

/// A failure inside an If branch or a Loop or Scan body reduces past that node (issue 18): while
/// the reduced model (at o.output) holds one, each in turn is replaced (replacements_of), and the
/// first replacement the oracle still fails, as the original failed, becomes the model the
/// strategies reduce again, fed the values the reduced model's inputs had. A replacement that
/// passes costs one oracle call and is noted. Updates out.report and out.original;
/// an error stops the rounds with out.stopped set, the best model so far still at o.output.
void reduce_inside_branches(const ReduceOptions& o, const CallContext& ctx, reduce::Oracle& oracle,
                            const reduce::ReduceOptions& ro, const fs::path& work,
                            ReduceResult& out) {
  int64_t spent = 0;  // oracle calls of replacements that did not fail
  for (int round = 0; round < kMaxBranchRounds; ++round) {
    auto reduced = load_model(o.output);
    if (!reduced) return;
    // The reduced model's boundary values as inputs again, fed what they held (once per round:
    // it does not depend on the node tried).
    std::vector<TensorMap> samples = out.report->feeds;
    if (!samples.empty())
      if (Status st = unfreeze_boundary_values(out.original.loaded().proto, reduced->proto,
                                               reduced->base_dir, samples);
          !st)
        return;
    if (!replace_one(o, ctx, oracle, ro, work, round, *reduced, samples, spent, out)) break;
  }
  if (spent > 0 && out.stopped.is_ok()) {
    out.report->oracle_calls += spent;
    out.report->notes.push_back("replacing an If by a branch made the failure go away (" +
                                std::to_string(spent) + " oracle calls), so the If stays");
  }
}

}  // namespace

Expected<ReduceResult> reduce(const ReduceOptions& o, const CallContext& ctx) {
  if (Status st = check_options(o); !st) return st;
  std::vector<std::string> strategies = o.strategies;
  if (strategies.empty()) {
    ODB_ASSIGN_OR_RETURN(strategies, reduce::strategies_for_mode(o.mode));
  }
  ReduceResult out;
  out.source = o.model;
  ODB_ASSIGN_OR_RETURN(reduce::Original original, prepare(o, ctx, out.messages));
  // Candidates the oracles write go to a private folder, removed when the call ends.
  ODB_ASSIGN_OR_RETURN(TempDir tmp, TempDir::create("onnxdbg-reduce-"));
  ODB_ASSIGN_OR_RETURN(auto oracle, make_oracle(o, original, tmp.path(), ctx));

  reduce::ReduceOptions ro;
  ro.strategies = strategies;
  ro.reducer.output = o.output;
  ro.reducer.journal = o.journal.empty() ? fs::path(o.output.string() + ".journal") : o.journal;
  ro.reducer.resume = o.resume;
  ro.reducer.artifacts = o.artifacts;
  ro.reducer.progress = ctx.progress;
  ro.reducer.any_failure = o.any_failure;
  ro.min_good = o.min_good;
  out.nodes = original.model.graph().node_size();
  out.oracle = oracle->describe();
  auto rep = reduce::reduce_model(original, *oracle, ro);
  out.original = result_model(o, std::move(original));
  if (!rep) {
    std::error_code ec;
    out.best_so_far = fs::exists(o.output, ec);
    out.stopped = Status(rep.status()).with_context("while reducing " + o.model.string());
    return out;
  }
  out.report = std::move(*rep);
  if (out.report->original_fails) reduce_inside_branches(o, ctx, *oracle, ro, tmp.path(), out);
  return out;
}

std::vector<StrategyInfo> reduce_strategies() {
  std::vector<StrategyInfo> out;
  for (const auto& s : reduce::strategy_table()) out.push_back({s.name, s.help});
  return out;
}

}  // namespace onnxdbg::api
