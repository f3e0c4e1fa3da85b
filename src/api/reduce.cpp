// api::reduce: prepares the model and its input samples, makes the oracle (check command,
// built-in or a caller's function, each stoppable by the cancel token) and runs the reducer
// (include/onnxdbg/reduce.h).
#include "onnxdbg/reduce.h"

#include "backends/backend_limits.h"
#include "core/run_limits.h"
#include "core/temp_dir.h"
#include "data/npz.h"
#include "data/test_data.h"
#include "model/model.h"
#include "reduce/strategies/strategies.h"
#include "surgeon/surgeon.h"

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
    ODB_ASSIGN_OR_RETURN(bool fails, fn_(candidate));
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

/// The model being reduced with its samples and golden values.
Expected<reduce::Original> prepare(const ReduceOptions& o, const CallContext& ctx,
                                   Messages& messages) {
  ODB_ASSIGN_OR_RETURN(LoadedModel loaded, load_model(o.model));
  for (const auto& w : loaded.warnings) add_warning(messages, w);
  reduce::Original original;
  original.model = std::move(loaded.proto);
  original.base_dir = loaded.base_dir;
  original.fallback_shapes = o.fallback_shapes;
  original.keep_inputs = o.keep_inputs;
  original.keep_outputs = o.keep_outputs;
  if (!o.model_input_shapes.empty())
    if (Status st = surgeon::override_input_shapes(original.model, o.model_input_shapes); !st)
      return st.with_context("--model-input-shapes");
  Status st = o.load_inputs.empty() ? generate_input_values(o, original, messages)
                                    : load_input_values(o, original);
  if (!st) return st;
  if (ctx.progress) ctx.progress("computing golden values on the reference");
  {
    RunLimits golden_limits;  // for the reference runs on every sample, together
    golden_limits.timeout_seconds = o.timeout_seconds;
    golden_limits.max_memory = o.max_memory;
    golden_limits.cancel = ctx.cancel.flag();
    ScopedRunLimits limits(golden_limits);
    if (Status p = prepare_original(original); !p) return p;
  }
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
      ODB_ASSIGN_OR_RETURN(bo.backends, parse_backend_list("reference,onnxruntime"));
    }
    apply_backend_limits(bo.backends, o.timeout_seconds, o.max_memory);
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
  out.original = std::move(original.model);
  out.base_dir = original.base_dir;
  if (!rep) {
    std::error_code ec;
    out.best_so_far = fs::exists(o.output, ec);
    out.stopped = Status(rep.status()).with_context("while reducing " + o.model.string());
    return out;
  }
  out.report = std::move(*rep);
  return out;
}

}  // namespace onnxdbg::api
