// api::run: the input samples, the comparison on every backend, the layerwise pass and the
// files of `onnxdbg run`, as one library call (include/onnxdbg/run.h). Rendering is in
// run_render.cpp.
#include "onnxdbg/run.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "backends/backend_limits.h"
#include "backends/reference/reference_backend.h"
#include "comparator/compare_run.h"
#include "comparator/input_gen.h"
#include "core/atomic_file.h"
#include "core/run_limits.h"
#include "data/golden_match.h"
#include "data/npz.h"
#include "data/polygraphy_json.h"
#include "data/samples.h"
#include "layerwise/layer_values.h"
#include "layerwise/layerwise.h"
#include "lint/fixes.h"
#include "lint/lint.h"
#include "model/graph.h"
#include "reference/interpreter.h"

namespace onnxdbg::api {

namespace {

namespace fs = std::filesystem;

/// The default repro folder: ./onnxdbg-repro/<model stem>_<node>, with only safe characters.
fs::path default_repro_dir(const fs::path& model, const LayerTensor& t) {
  std::string leaf = model.stem().string() + "_" +
                     (t.node.empty() ? t.op_type + "_" + std::to_string(t.node_index) : t.node);
  // Runs of other characters become one '_' ("loop/body/Mul#1 [iter 2]" ->
  // "loop_body_Mul_1_iter_2"), none at the end.
  std::string safe;
  for (char c : leaf) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    if (ok)
      safe += c;
    else if (safe.empty() || safe.back() != '_')
      safe += '_';
  }
  while (!safe.empty() && safe.back() == '_') safe.pop_back();
  return fs::path("onnxdbg-repro") / safe;
}

/// With strict_providers: one sentence naming the first backend that did not run on the
/// execution providers it asked for, or "" when all did.
std::string strict_provider_error(const CompareRunReport& rep) {
  for (const auto& b : rep.backends) {
    if (b.info.provider_warnings.empty()) continue;
    const size_t more = b.info.provider_warnings.size() - 1;
    return b.spec.to_string() +
           " did not run on the execution providers requested "
           "(--strict-providers): " +
           b.info.provider_warnings.front() +
           (more ? " (and " + std::to_string(more) + " more)" : "");
  }
  return "";
}

/// reference_accumulate: sets accumulate= on every reference backend of `specs` (a different
/// value given there is a usage error) and returns the options of the golden reference run of
/// the layerwise pass: those of the first reference backend (accumulate, threads, random_seed),
/// else the defaults with the given accumulate.
Expected<reference::InterpreterOptions> apply_reference_accumulate(
    const std::string& flag, std::vector<BackendSpec>& specs) {
  if (!flag.empty()) {
    auto acc = reference::parse_accumulate(flag);
    if (!acc) return invalid_argument("--reference-accumulate: " + acc.status().message());
    for (auto& s : specs) {
      if (s.name != "reference") continue;
      if (auto it = s.options.find("accumulate"); it != s.options.end() && it->second != flag)
        return invalid_argument("--reference-accumulate " + flag + " contradicts " + s.to_string() +
                                " in --backends");
      s.options["accumulate"] = flag;
    }
  }
  BackendSpec golden;
  golden.name = "reference";
  for (const auto& s : specs)
    if (s.name == "reference") {
      golden = s;
      break;
    }
  if (!flag.empty()) golden.options["accumulate"] = flag;
  return reference_options(golden);
}

/// Whether `path` names a Polygraphy JSON file (several samples fit only there).
bool is_json_path(const fs::path& path) { return path.extension() == ".json"; }

/// Writes one map per sample to `path`: .json (Polygraphy's input-list format) for any count,
/// else one .npz (the only choice before several samples existed, whatever the extension).
Status write_samples(const fs::path& path, const std::vector<TensorMap>& samples) {
  if (samples.size() == 1 && !is_json_path(path)) return save_npz(path, samples.front());
  return save_samples(path, samples);
}

/// The backends the layerwise pass compares with the golden values: with golden values given,
/// every backend; else, compared with the golden reference run, every backend but the float32
/// references (reference:precision=fp16 is, as the interpreter's float16 run).
Expected<std::vector<BackendSpec>> layerwise_backends(const std::vector<BackendSpec>& specs,
                                                      bool golden_given) {
  if (golden_given) return specs;
  std::vector<BackendSpec> out;
  for (const auto& s : specs)
    if (s.name != "reference" || s.option("precision") == "fp16") out.push_back(s);
  if (out.empty())
    return invalid_argument(
        "--layerwise compares the reference's intermediate tensors with another backend; add "
        "one to --backends (e.g. reference,onnxruntime)");
  return out;
}

/// The input samples' source for messages: "'in.npz'" or "the given inputs".
std::string inputs_what(const InputOptions& in) {
  return in.samples.empty() ? "'" + in.load_inputs.string() + "'" : "the given inputs";
}

/// Options that contradict each other, refused before anything is loaded.
Status check_input_options(const InputOptions& in) {
  if (in.iterations && *in.iterations < 1)
    return invalid_argument("--iterations must be at least 1 (it is " +
                            std::to_string(*in.iterations) + ")");
  if (in.iterations && (!in.load_inputs.empty() || !in.samples.empty()))
    return invalid_argument(
        "--iterations generates input samples, but " + inputs_what(in) +
        (in.samples.empty() ? " (--load-inputs)" : "") +
        " already decides them: every sample it holds runs, and --sample K picks one; drop "
        "--iterations");
  return Status::ok();
}

/// The generated samples: sample i from seed + i (as `reduce --iterations`); only `only` when
/// given.
Status generate_samples(const onnx::GraphProto& graph, const InputOptions& in, uint64_t max_memory,
                        RunResult& out, std::vector<TensorMap>& samples) {
  const size_t total = static_cast<size_t>(in.iterations.value_or(1));
  out.total_samples = total;
  if (in.sample && *in.sample >= total)
    return invalid_argument("--sample " + std::to_string(*in.sample) +
                            ": the generated inputs are " + std::to_string(total) +
                            " sample(s), 0 to " + std::to_string(total - 1) +
                            " (--iterations N generates N)");
  InputGenOptions gen = in.generate;
  if (gen.max_memory == 0) gen.max_memory = max_memory;
  for (size_t i = 0; i < total; ++i) {
    if (in.sample && i != *in.sample) continue;
    gen.seed = in.generate.seed + i;
    ODB_ASSIGN_OR_RETURN(TensorMap t, generate_inputs(graph, gen));
    samples.push_back(std::move(t));
    out.sample_ids.push_back(i);
  }
  return Status::ok();
}

/// The samples of a file, or those the caller gave, checked against the graph's inputs so that
/// data of another model is refused before any backend runs.
Status given_samples(const onnx::GraphProto& graph, const InputOptions& in, RunResult& out,
                     std::vector<TensorMap>& samples) {
  std::vector<TensorMap> all = in.samples;
  std::string what = inputs_what(in);
  if (all.empty()) {
    ODB_ASSIGN_OR_RETURN(LoadedSamples loaded,
                         load_samples(in.load_inputs, graph, DataRole::kInputs));
    all = std::move(loaded.samples);
    out.inputs_source = in.load_inputs.string();
  } else {
    out.inputs_source = "<given>";
  }
  std::string ignored;
  if (Status st = check_samples(all, graph, DataRole::kInputs, what, &ignored); !st) return st;
  if (!ignored.empty()) add_note(out.messages, ignored);
  out.total_samples = all.size();
  if (in.sample && *in.sample >= all.size())
    return invalid_argument("--sample " + std::to_string(*in.sample) + ": " + what + " holds " +
                            std::to_string(all.size()) + " sample(s)");
  for (size_t i = 0; i < all.size(); ++i) {
    if (in.sample && i != *in.sample) continue;
    samples.push_back(std::move(all[i]));
    out.sample_ids.push_back(i);
  }
  return Status::ok();
}

/// The input samples of the run (see InputOptions); the note about --sample when it picks one.
Expected<std::vector<TensorMap>> input_samples(const onnx::GraphProto& graph, const RunOptions& o,
                                               RunResult& out) {
  const InputOptions& in = o.inputs;
  const bool given = !in.samples.empty() || !in.load_inputs.empty();
  std::vector<TensorMap> samples;
  Status st = given ? given_samples(graph, in, out, samples)
                    : generate_samples(graph, in, o.max_memory, out, samples);
  if (!st) return st;
  out.seed = in.generate.seed;
  if (in.sample && out.total_samples > 1)
    add_note(out.messages,
             (given ? "'" + out.inputs_source + "' holds " : std::string("--iterations gives ")) +
                 std::to_string(out.total_samples) + " samples; running sample " +
                 std::to_string(*in.sample) + " (--sample K picks another; without it all run)");
  return samples;
}

/// Checks that `count` golden samples fit the `total` input samples.
Status check_golden_count(const RunOptions& o, const std::string& what, size_t count,
                          size_t total) {
  const bool inputs_given = !o.inputs.load_inputs.empty() || !o.inputs.samples.empty();
  if (count == total) return Status::ok();
  if (inputs_given)
    return invalid_argument(inputs_what(o.inputs) + " holds " + std::to_string(total) +
                            " input sample(s) but " + what + " holds " + std::to_string(count) +
                            " output sample(s); they must come from the same run");
  if (total == 1)
    return invalid_argument(what + " holds " + std::to_string(count) +
                            " output samples; give their inputs with --load-inputs so each is "
                            "compared with its own");
  return invalid_argument("--iterations " + std::to_string(total) + " generates " +
                          std::to_string(total) + " input samples but " + what + " holds " +
                          std::to_string(count) +
                          " output sample(s); they must come from the same run");
}

/// The golden values of the samples that run (loaded or given): `outputs`, graph outputs only,
/// for the output comparison, and with the layerwise pass `all`, every value of the model they
/// hold, for the layerwise comparison. Both empty when none are given.
struct Goldens {
  std::vector<TensorMap> outputs;
  std::vector<TensorMap> all;
  std::string source;  ///< a file path, or "given" (LayerwiseOptions::golden_source)
};

/// An error about golden values, with what --golden-names suffix and --golden-layout auto would
/// have done where they were not asked for (golden_hint), so that a TensorFlow dump refused by a
/// name or a shape says which flag fits it.
Status with_golden_hint(Status st, const std::vector<TensorMap>& golden,
                        const onnx::ModelProto& model, const ComparisonOptions& c) {
  if (st.code() != ErrorCode::kInvalidArgument || golden.empty()) return st;
  const std::string hint = golden_hint(golden, model, {c.golden_names, c.golden_layout});
  if (hint.empty()) return st;
  Status hinted(st.code(), st.message() + " (" + hint + ")");
  for (const auto& line : st.context()) hinted.with_context(line);
  return hinted;
}

Expected<Goldens> golden_values(const onnx::ModelProto& model, const RunOptions& o, bool layerwise,
                                RunResult& out) {
  const onnx::GraphProto& graph = model.graph();
  const ComparisonOptions& c = o.comparison;
  Goldens g;
  std::vector<TensorMap> all = c.golden;
  std::string what = "the given golden outputs";
  g.source = "given";
  const GoldenMatchOptions match{c.golden_names, c.golden_layout};
  if (all.empty()) {
    if (c.load_outputs.empty()) {
      if (match.active())
        add_note(out.messages,
                 "--golden-names and --golden-layout fit golden values (--load-outputs) to the "
                 "model; none are given, so they do nothing");
      return g;
    }
    ODB_ASSIGN_OR_RETURN(LoadedSamples loaded,
                         load_samples(c.load_outputs, graph, DataRole::kOutputs));
    all = std::move(loaded.samples);
    what = "'" + c.load_outputs.string() + "'";
    g.source = c.load_outputs.string();
    if (!loaded.note.empty()) add_note(out.messages, loaded.note);
  }
  // A framework's dump: keys renamed and tensors transposed to the model's before the check.
  if (match.active()) {
    ODB_ASSIGN_OR_RETURN(GoldenMatchReport r, match_golden(all, model, match, what));
    for (const auto& n : r.notes) add_note(out.messages, n);
    out.golden_match = std::move(r);
  }
  if (Status st = check_samples(all, graph, DataRole::kOutputs, what); !st)
    return with_golden_hint(st, all, model, c);
  if (Status st = check_golden_count(o, what, all.size(), out.total_samples); !st) return st;
  // Graph outputs are the output comparison's golden values; inputs and intermediate tensors a
  // merged file may also hold are the layerwise pass's, and without it not compared.
  const auto outputs = model_outputs(graph);
  auto is_output = [&](const std::string& name) {
    return std::any_of(outputs.begin(), outputs.end(),
                       [&](const auto& sig) { return sig.name == name; });
  };
  size_t others = 0;
  for (size_t id : out.sample_ids) {
    TensorMap full = std::move(all[id]);
    TensorMap graph_outputs;
    size_t not_outputs = 0;
    for (const auto& [name, t] : full) {
      if (is_output(name))
        graph_outputs.emplace(name, t);
      else
        ++not_outputs;
    }
    if (g.outputs.empty()) others = not_outputs;
    g.outputs.push_back(std::move(graph_outputs));
    if (layerwise) g.all.push_back(std::move(full));
  }
  if (others && !layerwise)
    add_note(out.messages, what + " also holds " + std::to_string(others) +
                               " tensor(s) that are not graph outputs; they are not compared "
                               "(--layerwise compares them)");
  return g;
}

/// Several samples fit only a .json file; refused before anything runs or is written.
Status check_save_paths(const RunOptions& o, size_t n) {
  for (const auto& [flag, path] :
       {std::pair{"--save-inputs", &o.save_inputs}, std::pair{"--save-outputs", &o.save_outputs}})
    if (n > 1 && !path->empty() && !is_json_path(*path))
      return invalid_argument(
          std::string(flag) + " '" + path->string() + "': " + std::to_string(n) +
          " samples do not fit one .npz file; give a .json path (Polygraphy's format, one entry "
          "per sample, which --load-inputs/--load-outputs read back)");
  return Status::ok();
}

/// The main graph's float16 and bfloat16 values: initializers, graph inputs, value_info and the
/// outputs of Casts to those types (a model exported in float16 has many of them).
int64_t half_precision_values(const onnx::GraphProto& g) {
  const auto half = [](int32_t t) {
    return t == onnx::TensorProto::FLOAT16 || t == onnx::TensorProto::BFLOAT16;
  };
  int64_t n = 0;
  for (const auto& t : g.initializer()) n += half(t.data_type());
  for (const auto* list : {&g.input(), &g.value_info()})
    for (const auto& v : *list) n += half(v.type().tensor_type().elem_type());
  for (const auto& node : g.node())
    if (node.op_type() == "Cast" && (node.domain().empty() || node.domain() == "ai.onnx"))
      for (const auto& a : node.attribute())
        if (a.name() == "to") n += half(static_cast<int32_t>(a.i()));
  return n;
}

/// float16 rounds every value to 11 significant bits: tolerances meant for float32 put nearly
/// every tensor of a float16 backend, or of a model that computes in float16 (whose backends
/// round differently: ONNX Runtime's CPU provider computes most float16 ops in float32), outside
/// tolerance, which hides where it really goes wrong.
void note_fp16_tolerance(const RunOptions& o, const std::vector<BackendSpec>& specs,
                         const onnx::GraphProto& graph, Messages& messages) {
  const double rtol = o.comparison.tolerance.default_tol.rtol;
  if (rtol >= kFloat16RelativeRounding) return;
  std::ostringstream r;
  r << rtol;
  for (const auto& s : specs)
    if (s.option("precision") == "fp16") {
      add_note(messages, s.to_string() +
                             " rounds every value to float16 (relative error up to 4.9e-4), "
                             "beyond --rtol " +
                             r.str() +
                             "; float16 runs are usually compared with --atol 1e-3 --rtol 1e-2");
      return;
    }
  if (specs.size() + (o.comparison.golden_given() ? 1 : 0) < 2) return;
  if (const int64_t n = half_precision_values(graph); n > 0)
    add_note(messages, "the model computes in float16 or bfloat16 (" + std::to_string(n) +
                           " such values in its main graph), which backends round differently "
                           "(ONNX Runtime's CPU provider computes most float16 ops in float32): "
                           "errors beyond --rtol " +
                           r.str() +
                           " are usual; such models are usually compared with --atol 1e-3 "
                           "--rtol 1e-2, and --layerwise tells rounding from a divergence");
}

/// The output comparison's options (the loaded golden outputs move out of `goldens`).
CompareRunOptions comparison_options(const RunOptions& o, Goldens& goldens,
                                     const CallContext& ctx) {
  CompareRunOptions opt;
  opt.tolerance = o.comparison.tolerance;
  opt.error_stat = o.comparison.error_stat;
  opt.validate = o.comparison.validate;
  opt.progress = ctx.progress;
  if (!goldens.outputs.empty()) {
    opt.golden_outputs = std::move(goldens.outputs);
    opt.golden_source = goldens.source;
  }
  opt.cancelled = [&ctx] { return ctx.cancel.cancelled(); };
  return opt;
}

/// The layerwise pass's options for sample i of n.
LayerwiseOptions layer_options(const RunOptions& o,
                               const reference::InterpreterOptions& golden_options,
                               const Goldens& goldens, const CallContext& ctx, size_t i, size_t n) {
  LayerwiseOptions lo;
  lo.tolerance = o.comparison.tolerance;
  lo.error_stat = o.comparison.error_stat;
  lo.memory_budget = o.layerwise.memory_budget;
  lo.isolate = o.layerwise.isolate;
  lo.reference = golden_options;
  lo.golden = goldens.all.empty() ? nullptr : &goldens.all[i];
  lo.golden_source = goldens.source;
  lo.cancelled = [&ctx] { return ctx.cancel.cancelled(); };
  if (ctx.progress)
    lo.progress = [&ctx, i, n](const std::string& s) {
      ctx.progress(n > 1 ? "sample " + std::to_string(i) + ": " + s : s);
    };
  return lo;
}

/// What the output comparison's reference run left for the layerwise pass of sample 0
/// (GoldenRunSession): the pass it began, or the reference's own failure in that run.
struct SharedGoldenRun {
  std::unique_ptr<PreparedLayerwise> prepared;
  std::optional<Status> failure;
};

/// The golden reference backend's session in the output comparison when the layerwise pass
/// follows on one sample: its run is the pass's first reference run (prepare_layerwise: every
/// golden value kept), which it hands to `shared`, and the graph outputs come from it, so the
/// reference runs once for both. The plain session is let go first (its interpreter's copy of
/// the model would add to the run's peak memory). The reference's own failure in that run is the
/// comparison's; where the pass cannot be prepared for another reason, or lacks an output, a new
/// plain session of `spec` runs instead (and the pass prepares itself later).
class GoldenRunSession : public Session {
 public:
  GoldenRunSession(std::unique_ptr<Session> plain, BackendSpec spec, const LoadedModel& model,
                   const TensorMap& sample, LayerwiseOptions options, SharedGoldenRun& shared)
      : plain_(std::move(plain)),
        info_(plain_->info()),
        spec_(std::move(spec)),
        model_(model),
        sample_(sample),
        options_(std::move(options)),
        shared_(shared) {}
  const SessionInfo& info() const override { return info_; }
  Expected<SessionRunResult> run(const TensorMap& inputs) override {
    const bool cancelled = options_.cancelled && options_.cancelled();
    if (&inputs != &sample_ || shared_.prepared || shared_.failure || cancelled)
      return run_plain(inputs);
    plain_.reset();
    auto pass = prepare_layerwise(model_, sample_, options_);
    if (!pass) {
      // The reference's own failure (a timeout, a malformed or unsupported model, Ctrl-C) is the
      // run's: a plain run would fail the same way, after as long. Others (the budget, the spill
      // file's folder, a memory limit) leave a plain run to do.
      const ErrorCode code = pass.status().code();
      if (code == ErrorCode::kBackendError || code == ErrorCode::kModelError ||
          code == ErrorCode::kUnsupported || code == ErrorCode::kCancelled) {
        shared_.failure = pass.status();
        return pass.status();
      }
      return run_plain(inputs);
    }
    auto outputs = (*pass)->graph_outputs();
    if (!outputs || outputs->size() != static_cast<size_t>(model_.proto.graph().output_size()))
      return run_plain(inputs);
    SessionRunResult r;
    r.run_seconds = (*pass)->seconds();
    r.peak_rss_bytes = peak_rss_bytes();
    r.outputs = std::move(*outputs);
    shared_.prepared = std::move(*pass);
    return r;
  }
  Expected<ValueRunResult> run_values(const ValueMap& inputs) override {
    ODB_ASSIGN_OR_RETURN(Session * s, plain());
    return s->run_values(inputs);
  }
  Expected<SessionRunResult> run_observing(const TensorMap& inputs,
                                           const std::vector<std::string>& tensors) override {
    ODB_ASSIGN_OR_RETURN(Session * s, plain());
    return s->run_observing(inputs, tensors);
  }

 private:
  // The plain session, loaded again when it was let go. Errors: the backend's create or load.
  Expected<Session*> plain() {
    if (!plain_) {
      ODB_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, create_backend(spec_));
      ODB_ASSIGN_OR_RETURN(plain_, backend->load(model_));
    }
    return plain_.get();
  }
  Expected<SessionRunResult> run_plain(const TensorMap& inputs) {
    ODB_ASSIGN_OR_RETURN(Session * s, plain());
    return s->run(inputs);
  }

  std::unique_ptr<Session> plain_;
  const SessionInfo info_;
  const BackendSpec spec_;
  const LoadedModel& model_;
  const TensorMap& sample_;
  const LayerwiseOptions options_;
  SharedGoldenRun& shared_;
};

/// The index in `specs` of the backend whose run GoldenRunSession may share with the layerwise
/// pass: the first reference backend (whose options the golden run takes), when it runs the
/// model as given (not precision=fp16); nullopt otherwise.
std::optional<size_t> shared_golden_backend(const std::vector<BackendSpec>& specs) {
  for (size_t k = 0; k < specs.size(); ++k)
    if (specs[k].name == "reference")
      return specs[k].option("precision").empty() ? std::optional<size_t>(k) : std::nullopt;
  return std::nullopt;
}

/// The layerwise pass of every sample, and the repro folder of the first sample that has a
/// first divergent node. The first sample's error (a budget too small, say) is everyone's and
/// is returned; a later sample's is that sample's result. `shared`: sample 0's pass when the
/// output comparison's reference run began it (GoldenRunSession), released once it ran, or the
/// reference's failure in that run, which is sample 0's result (the report keeps the table).
Status run_layers(const RunOptions& o, const std::vector<BackendSpec>& layer_specs,
                  const reference::InterpreterOptions& golden_options,
                  const std::vector<TensorMap>& samples, const Goldens& goldens,
                  const CallContext& ctx, SharedGoldenRun& shared, RunResult& out) {
  const size_t n = samples.size();
  out.layers.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (ctx.cancel.cancelled())
      return cancelled("run cancelled before the layerwise pass of sample " + std::to_string(i));
    if (i == 0 && shared.failure) {
      out.layers[0].error = shared.failure->to_string();
      continue;
    }
    const LayerwiseOptions lo = layer_options(o, golden_options, goldens, ctx, i, n);
    const TensorMap* loaded = lo.golden;
    const bool use_shared = i == 0 && shared.prepared;
    Expected<LayerwiseReport> lw =
        use_shared ? run_layerwise(*shared.prepared, layer_specs)
                   : run_layerwise(out.model.loaded(), layer_specs, samples[i], lo);
    if (use_shared) {
      if (lw) lw->golden_run_shared = true;
      shared.prepared.reset();  // its spill file goes now
    }
    if (!lw) {
      if (i == 0)
        return n > 1 ? Status(lw.status().code(), "sample 0: " + lw.status().message())
                     : lw.status();
      out.layers[i].error = lw.status().to_string();
      continue;
    }
    out.layers[i].report = std::move(*lw);
    LayerwiseReport& lr = *out.layers[i].report;
    if (!lr.first || out.repro_sample || o.layerwise.save_repro == "-") continue;
    out.repro_sample = i;
    const fs::path dir = o.layerwise.save_repro.empty()
                             ? default_repro_dir(out.source, lr.tensors[lr.first->tensor])
                             : o.layerwise.save_repro;
    if (ctx.progress) ctx.progress("writing the repro folder " + dir.string());
    Status st =
        save_layerwise_repro(out.model.loaded(), samples[i], lr, dir, golden_options, loaded);
    if (!st) add_warning(out.messages, "no repro folder: " + st.message());
  }
  return Status::ok();
}

/// --save-outputs: per sample, the golden (first) backend's outputs under their own names, the
/// others as BACKEND/NAME (.npz), or as Polygraphy's RunResults with one runner per backend
/// (.json); with the layerwise pass also every intermediate tensor's reference value; all
/// computed before anything is written.
Status save_outputs(const RunOptions& o, const reference::InterpreterOptions& golden_options,
                    const std::vector<TensorMap>& samples, RunResult& out) {
  const size_t n = samples.size();
  std::vector<TensorMap> layer_values(n);
  if (!out.layers.empty())
    for (size_t i = 0; i < n; ++i) {
      ODB_ASSIGN_OR_RETURN(layer_values[i],
                           reference_layer_values(out.model.loaded(), samples[i],
                                                  o.layerwise.memory_budget, golden_options));
    }
  if (is_json_path(o.save_outputs)) {
    // One runner per backend that ran every sample, in --backends order; the first one's
    // iterations also hold the layerwise values, as the golden values --load-outputs reads.
    std::vector<std::pair<std::string, std::vector<Sample>>> runs;
    std::vector<std::string> left_out;
    const auto& first = out.report.samples.front().backends;
    for (size_t k = 0; k < first.size(); ++k) {
      const std::string runner = first[k].spec.to_string();
      std::vector<Sample> iterations;
      for (size_t i = 0; i < n; ++i) {
        const auto& backends = out.report.samples[i].backends;
        if (k >= backends.size() || !backends[k].ok) break;
        iterations.push_back(backends[k].outputs);
      }
      if (iterations.size() != n) {
        left_out.push_back(runner);
        continue;
      }
      if (runs.empty())
        for (size_t i = 0; i < n; ++i)
          for (auto& [name, t] : layer_values[i]) iterations[i].emplace(name, std::move(t));
      runs.emplace_back(runner, std::move(iterations));
    }
    if (!left_out.empty()) {
      std::string names;
      for (const auto& r : left_out) names += (names.empty() ? "" : ", ") + r;
      add_note(out.messages, "--save-outputs '" + o.save_outputs.string() + "' leaves out " +
                                 names + " (failed on a sample); its RunResults hold the " +
                                 "backends that ran every sample");
    }
    if (runs.empty())
      return invalid_argument("--save-outputs '" + o.save_outputs.string() +
                              "': no backend ran, so there are no outputs to write");
    return write_file_atomic(o.save_outputs, polygraphy_run_results_json(runs));
  }
  std::vector<TensorMap> all(n);
  for (size_t i = 0; i < n; ++i) {
    bool first = true;
    for (const auto& b : out.report.samples[i].backends) {
      if (!b.ok) continue;
      for (const auto& [name, t] : b.outputs)
        all[i][first ? name : b.spec.to_string() + "/" + name] = t;
      first = false;
    }
    for (auto& [name, t] : layer_values[i]) all[i].emplace(name, std::move(t));
  }
  return write_samples(o.save_outputs, all);
}

/// The first backend of `rep` that failed with a model error.
std::string first_model_error(const CompareRunReport& rep) {
  for (const auto& b : rep.backends)
    if (b.error_code == ErrorCode::kModelError) return b.spec.to_string();
  return "a backend";
}

/// A model every backend failed on, on every sample, one of them because the model itself is
/// invalid (kModelError): a bad model (exit status 2), not a backend's failure. It takes two
/// backends at least: the reference alone refusing a model (a window too large to compute, say)
/// is its row's failure, as before.
void find_model_problem(RunResult& out) {
  if (out.report.verdict != Verdict::kError || out.report.samples.front().backends.size() < 2)
    return;
  bool model_error = false;
  for (const auto& s : out.report.samples)
    for (const auto& b : s.backends) {
      if (b.ok) return;
      model_error = model_error || b.error_code == ErrorCode::kModelError;
    }
  if (!model_error) return;
  const CompareRunReport& first = out.report.samples.front();
  std::string reasons;
  for (const auto& b : first.backends)
    reasons += (reasons.empty() ? "" : "; ") + b.spec.to_string() + " (" + b.failed_stage +
               "): " + b.error;
  out.model_problem = "every backend failed on the model, which " + first_model_error(first) +
                      " found invalid: " + reasons;
}

/// With strict_providers: the first sample's provider problem becomes the verdict.
void apply_strict_providers(RunResult& out) {
  for (const auto& s : out.report.samples)
    if (out.provider_problem.empty()) out.provider_problem = strict_provider_error(s);
  if (out.provider_problem.empty()) return;
  if (out.report.samples.size() == 1) {
    out.report.samples.front().verdict = Verdict::kError;
    out.report.samples.front().verdict_line = out.provider_problem;
  }
  out.report.verdict = Verdict::kError;
  out.report.verdict_line = out.provider_problem;
}

}  // namespace

namespace {

/// The layerwise pass's verdict on one sample, with its sentence; nullopt when it agrees.
std::optional<std::pair<Verdict, std::string>> layers_verdict(const SampleLayers& l) {
  if (!l.report) {
    if (l.error.empty()) return std::nullopt;
    return std::pair{Verdict::kError, "the layerwise pass could not run: " + l.error};
  }
  const LayerwiseReport& r = *l.report;
  for (const auto& b : r.backends)
    if (!b.ok)
      return std::pair{Verdict::kError,
                       "the layerwise pass could not compare " + b.backend + ": " + b.error};
  for (const auto& b : r.backends) {
    if (b.failed == 0) continue;
    std::string line = std::to_string(b.failed) + " of " + std::to_string(b.observed) +
                       " intermediate tensors on " + b.backend +
                       " are outside tolerance (layerwise)";
    if (b.first) {
      const LayerTensor& t = r.tensors[b.first->tensor];
      line += "; first divergent node " +
              node_label(t.node, t.op_type, static_cast<int64_t>(t.node_index)) + ", tensor '" +
              t.name + "'" +
              (b.first->basis == "own"       ? " (its own error)"
               : b.first->basis == "context" ? " (agrees alone, not within the graph)"
                                             : " (the first outside tolerance)");
    } else {
      line += "; no node is outside tolerance on its own";
    }
    return std::pair{Verdict::kDisagree, line};
  }
  return std::nullopt;
}

}  // namespace

bool SampleLayers::agree() const {
  if (!report) return error.empty();
  for (const auto& b : report->backends)
    if (!b.ok || b.failed != 0) return false;
  return true;
}

Verdict RunResult::verdict() const {
  if (!provider_problem.empty() || !model_problem.empty()) return Verdict::kError;
  if (report.verdict != Verdict::kAgree) return report.verdict;
  for (const auto& l : layers)
    if (auto v = layers_verdict(l)) return v->first;
  return Verdict::kAgree;
}

std::string RunResult::verdict_line() const {
  if (!provider_problem.empty()) return provider_problem;
  if (!model_problem.empty()) return model_problem;
  if (report.verdict != Verdict::kAgree) return report.verdict_line;
  for (size_t i = 0; i < layers.size(); ++i)
    if (auto v = layers_verdict(layers[i]))
      return (layers.size() > 1 ? "sample " + std::to_string(i) + ": " : std::string()) +
             "the outputs agree (" + report.verdict_line + "), but " + v->second;
  if (!layers.empty())
    return report.verdict_line + "; every intermediate tensor agrees (layerwise)";
  return report.verdict_line;
}

bool RunResult::sample_disagrees(size_t i) const {
  return report.samples[i].verdict != Verdict::kAgree || (!layers.empty() && !layers[i].agree());
}

size_t RunResult::shown_sample() const {
  for (size_t i = 0; i < report.samples.size(); ++i)
    if (sample_disagrees(i)) return i;
  return 0;
}

/// Lint rules whose errors mean no runtime can run the model as written (ONNX checker and loader
/// territory: undefined inputs, ops or attributes that do not exist, stored tensors
/// or attributes that contradict themselves). The checker's own rule stays out: it also rejects
/// what runtimes accept (a graph output without a shape).
Status check_structure(const LoadedModel& model) {
  // rules.def marks the rules whose errors no runtime can get past.
  static const std::vector<std::string> kList = lint::structural_rule_names();
  static const std::set<std::string> kStructural(kList.begin(), kList.end());
  lint::LintOptions lo;
  for (const auto& r : lint::rule_names())
    if (!kStructural.count(r)) lo.disabled_rules.insert(r);
  ODB_ASSIGN_OR_RETURN(std::vector<lint::Finding> findings, lint::lint_model(model, lo));
  const auto bad = std::find_if(findings.begin(), findings.end(), [](const lint::Finding& f) {
    return f.severity == lint::Severity::kError;
  });
  if (bad == findings.end()) return Status::ok();
  std::string where = bad->label.empty() ? "" : "node " + bad->label;
  if (bad->graph != "main") where += (where.empty() ? "graph " : " of graph ") + bad->graph;
  std::string msg = bad->message;
  if (!msg.empty() && msg.back() == '.') msg.pop_back();
  const int64_t n = lint::count_findings(findings).error;
  return model_error("the model is malformed, so no backend ran it: " + where +
                     (where.empty() ? "" : ": ") + msg + " (" + std::to_string(n) + " error" +
                     (n == 1 ? "" : "s") + "; `onnxdbg lint` lists them)");
}

/// Nodes listed before the producers of what they read break the ONNX IR spec ("Graphs": nodes
/// in topological order), yet ONNX Runtime sorts them and runs such models, and so does the
/// reference (interpreter.h): a note names how many and the fix, with lint's rule finding them
/// one by one. Nodes forming a cycle leave no order at all: a model error, as lint's structural
/// findings.
Status check_node_order(const LoadedModel& model, bool layerwise, Messages& messages) {
  int64_t early = 0;
  Status cycle;
  walk_graphs(model.proto.graph(), [&](const GraphVisit& v) {
    const onnx::GraphProto& g = *v.graph;
    const std::vector<std::string> free = free_names(g);
    if (auto order = topological_order(g, NameSet(free.begin(), free.end())); !order) {
      if (cycle.is_ok())
        cycle = model_error("the model is malformed, so no backend ran it: graph " + v.path + ": " +
                            order.status().message());
      return;
    }
    const auto prod = producers(g);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto reads = node_reads(g.node(i));
      early += std::any_of(reads.begin(), reads.end(), [&](const std::string& r) {
        auto it = prod.find(r);
        return it != prod.end() && it->second > i;
      });
    }
  });
  if (!cycle.is_ok()) return cycle;
  if (early == 0) return Status::ok();
  add_note(messages,
           std::to_string(early) + " node" + (early == 1 ? " is" : "s are") +
               " listed before the nodes producing " + (early == 1 ? "its" : "their") +
               " inputs, which ONNX forbids (`onnxdbg lint` lists them); the reference runs the "
               "nodes in a topological order, as ONNX Runtime does, and `" +
               lint::surgeon_command_line(model.path, "sanitize", "--toposort", "sorted") +
               "` writes the model sorted (unless lint finds other errors in it)" +
               (layerwise ? "; --layerwise numbers the nodes (#N) in that order" : ""));
  return Status::ok();
}

Expected<RunResult> run(const RunOptions& o, const CallContext& ctx) {
  if (Status st = check_input_options(o.inputs); !st) return st;
  std::vector<BackendSpec> specs = o.backends;
  if (specs.empty()) {
    ODB_ASSIGN_OR_RETURN(specs, parse_backend_list(std::string(option_defaults::backends)));
  }
  apply_backend_limits(specs, o.timeout_seconds, o.max_memory, o.max_iterations);
  ODB_ASSIGN_OR_RETURN(reference::InterpreterOptions golden_options,
                       apply_reference_accumulate(o.reference_accumulate, specs));
  // The golden reference run of the layerwise pass has the limits too (when --backends holds no
  // reference backend, its options are the defaults).
  if (o.timeout_seconds > 0 && golden_options.timeout_seconds == 0)
    golden_options.timeout_seconds = o.timeout_seconds;
  if (o.max_memory > 0 && golden_options.max_memory == 0) golden_options.max_memory = o.max_memory;
  if (o.max_iterations > 0 && golden_options.max_iterations == 0)
    golden_options.max_iterations = o.max_iterations;
  // Ctrl-C (ctx.cancel) stops the in-process reference inside a node too, not only between runs;
  // a reference run past 10 s says where it is on the progress line (reference/run_watch.h).
  RunLimits call_limits;
  call_limits.cancel = ctx.cancel.flag();
  if (ctx.progress) call_limits.progress = &ctx.progress;
  ScopedRunLimits limits(call_limits);
  const bool layerwise = o.layerwise.enabled || o.layerwise.isolate;
  std::vector<BackendSpec> layer_specs;
  if (layerwise) {
    ODB_ASSIGN_OR_RETURN(layer_specs, layerwise_backends(specs, o.comparison.golden_given()));
  }

  RunResult out;
  out.source = o.model.empty() ? o.loaded_model.path() : o.model;
  if (!o.loaded_model.empty()) {
    if (!o.model.empty() && o.model != o.loaded_model.path())
      return invalid_argument("RunOptions names two models: loaded_model was read from '" +
                              o.loaded_model.path().string() + "' but model is '" +
                              o.model.string() + "'; set one");
    out.model = o.loaded_model;
  } else {
    ODB_ASSIGN_OR_RETURN(out.model, Model::load(o.model));
  }
  if (Status st = check_structure(out.model.loaded()); !st) return st;
  if (Status st = check_node_order(out.model.loaded(), layerwise, out.messages); !st) return st;
  for (const auto& w : out.model.loaded().warnings) add_warning(out.messages, w);
  const onnx::GraphProto& graph = out.model.loaded().proto.graph();
  ODB_ASSIGN_OR_RETURN(std::vector<TensorMap> samples, input_samples(graph, o, out));
  ODB_ASSIGN_OR_RETURN(Goldens goldens, golden_values(out.model.loaded().proto, o, layerwise, out));
  if (Status st = check_save_paths(o, samples.size()); !st) return st;
  if (!o.save_inputs.empty())
    if (Status st = write_samples(o.save_inputs, samples); !st) return st;
  note_fp16_tolerance(o, specs, graph, out.messages);
  if (ctx.cancel.cancelled()) return cancelled("run cancelled before any backend ran");

  CompareRunOptions opt = comparison_options(o, goldens, ctx);
  // With the layerwise pass on one sample and the reference's golden values, the comparison's
  // reference run is the pass's first reference run: the reference runs once (issue 40).
  SharedGoldenRun shared_run;
  const std::optional<size_t> shared =
      layerwise && samples.size() == 1 && !o.comparison.golden_given()
          ? shared_golden_backend(specs)
          : std::nullopt;
  if (shared)
    opt.wrap_session = [&](size_t k, std::unique_ptr<Session> s) -> std::unique_ptr<Session> {
      if (k != *shared) return s;
      return std::make_unique<GoldenRunSession>(
          std::move(s), specs[k], out.model.loaded(), samples.front(),
          layer_options(o, golden_options, goldens, ctx, 0, 1), shared_run);
    };
  out.report = run_and_compare_samples(out.model.loaded(), specs, samples, opt);
  if (ctx.cancel.cancelled()) return cancelled("run cancelled while the backends ran");
  find_model_problem(out);
  if (layerwise && out.model_problem.empty())
    if (Status st =
            run_layers(o, layer_specs, golden_options, samples, goldens, ctx, shared_run, out);
        !st)
      return with_golden_hint(st, goldens.all, out.model.loaded().proto, o.comparison);
  if (ctx.cancel.cancelled()) return cancelled("run cancelled during the layerwise pass");
  if (o.strict_providers) apply_strict_providers(out);
  if (!o.save_outputs.empty())
    if (Status st = save_outputs(o, golden_options, samples, out); !st) return st;
  return out;
}

}  // namespace onnxdbg::api
