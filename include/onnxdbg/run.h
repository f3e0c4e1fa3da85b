// onnxdbg::api::run: run one model on several backends with the same inputs, compare every
// output with golden values (the first backend's, or loaded ones), optionally compare every
// intermediate tensor (layerwise) and re-run divergent nodes alone (isolate). What `onnxdbg run`
// does, as one library call: options in, one result out, rendered as text, JSON or HTML by the
// functions below (the CLI and the Python package call the same ones).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "onnxdbg/backend_spec.h"
#include "onnxdbg/common.h"
#include "onnxdbg/compare.h"
#include "onnxdbg/golden.h"
#include "onnxdbg/input_gen.h"
#include "onnxdbg/layerwise_report.h"
#include "onnxdbg/model.h"
#include "onnxdbg/options.h"
#include "onnxdbg/run_report.h"
#include "onnxdbg/tensor.h"
#include "onnxdbg/viewer_overlays.h"

namespace onnxdbg::api {

/// Where the input samples come from (the CLI's input group: --input-shapes, --val-range,
/// --seed, --iterations, --load-inputs, --sample). Exactly one source is used: `samples` when
/// not empty, else `load_inputs` when set, else `iterations` generated samples.
struct InputOptions {
  /// Generated values: seed of sample 0 (sample i uses seed + i), value ranges, and the sizes
  /// of dynamic dimensions (SplitMix64, the same values on every machine; comparator/input_gen.h).
  InputGenOptions generate;
  /// Generated samples, at least 1 (unset: 1); set together with load_inputs or samples is an
  /// error (the data decides the samples).
  std::optional<int> iterations;
  /// A data file or folder: .npz, Polygraphy JSON, an ONNX test-data folder, .pb or .npy
  /// (data/samples.h); every sample it holds runs. Names must be graph inputs of the model.
  std::filesystem::path load_inputs;
  std::vector<TensorMap> samples;  ///< given by the caller (Python arrays); each a full input set
  std::optional<size_t> sample;    ///< run only sample K (0-based) of the samples above
};

/// How outputs are compared (the CLI's comparison group: --atol, --rtol, --check-error-stat,
/// --validate, --load-outputs).
struct ComparisonOptions {
  ToleranceSpec tolerance;  ///< default 1e-5 / 1e-5; per output name
  ErrorStat error_stat = ErrorStat::kElemwise;
  bool validate = false;  ///< also fail on NaN/Inf in any output
  /// Golden outputs every backend is compared with, instead of the first backend's: a file
  /// (as load_inputs) holding one sample per input sample, or `golden` given directly (one map
  /// per input sample). Names must be values of the model. Tensors that are not graph outputs
  /// are dropped with a note, unless the layerwise pass runs: then every loaded node output
  /// (intermediate tensors too, e.g. dumped by PyTorch) is the golden value of its tensor, every
  /// backend (the reference too) is compared with them, and the tensors without one are listed
  /// as LayerwiseReport::no_golden (see LayerwiseOptions::golden).
  std::filesystem::path load_outputs;
  std::vector<TensorMap> golden;
  /// How the golden values' keys name the model's tensors (--golden-names: exact, or suffix for
  /// a framework's names such as TensorFlow's "block_3/depthwise:0") and in which axis order
  /// their tensors are (--golden-layout: as-is, auto, nhwc); applied to `load_outputs` and
  /// `golden` alike before they are checked (data/golden_match.h's match_golden; the result's
  /// golden_match says what was done).
  GoldenNames golden_names = kDefaultGoldenNames;
  GoldenLayout golden_layout = kDefaultGoldenLayout;
  /// Whether golden outputs are given (loaded or passed directly).
  bool golden_given() const { return !golden.empty() || !load_outputs.empty(); }
};

/// The layerwise pass (--layerwise, --isolate, --layerwise-memory, --save-repro).
struct LayerwiseRunOptions {
  bool enabled = false;  ///< compare every intermediate tensor of the main graph
  bool isolate = false;  ///< re-run each divergent node alone on golden inputs (implies enabled)
  /// Bytes of intermediate tensors held at once (--layerwise-memory), default 2 GiB.
  uint64_t memory_budget = option_defaults::layerwise_memory;
  /// Folder the first divergent node is written to as an ONNX test case; empty: the default
  /// ./onnxdbg-repro/<model stem>_<node>; "-": none.
  std::filesystem::path save_repro;
};

struct RunOptions {
  std::filesystem::path model;
  /// The model already loaded (a RunResult's `model`, Model::load): run instead of reading
  /// `model` again, which then only names it (several runs of one model load it once, as
  /// bisect_optimizers' trials do); `model` must then be empty or the path it was read from
  /// (kInvalidArgument otherwise). Empty: `model` is read.
  Model loaded_model;
  /// Backends and their options; the first gives the golden values unless golden outputs are
  /// loaded. Default reference,onnxruntime. The layerwise pass compares them with the reference
  /// (float32 references left out, as they are the golden run), or with every one of them when
  /// golden values are loaded or given.
  std::vector<BackendSpec> backends;
  /// "float" or "double": accumulate= on every reference backend and on the golden reference
  /// run of the layerwise pass; "" leaves the backends' own option.
  std::string reference_accumulate;
  /// A backend not running on the execution providers it asked for is an error (the result's
  /// provider_problem), not a warning.
  bool strict_providers = false;
  /// Seconds each backend run may take (--timeout): timeout= on every backend of `backends`
  /// that sets none (the reference then fails a run with "timed out after N s", checked between
  /// nodes, in every Loop/Scan iteration and inside long kernels; the isolated backends kill
  /// their worker), and the golden reference run of the layerwise pass. 0: the backends' own
  /// (reference: none; onnxruntime, opencv: 300 s).
  double timeout_seconds = 0;
  /// Bytes one tensor may take (--max-memory): each generated input (InputGenOptions::max_memory
  /// when that is 0), and on the reference backends (max_memory= where they set none) each
  /// initializer and node output, checked before it is allocated; a larger one is refused in one
  /// sentence naming it. 0: 80% of the memory available (core/run_limits.h), lowered to what the
  /// process can still allocate (`ulimit -v`, the cgroup's memory limit) for large tensors.
  uint64_t max_memory = 0;
  /// Iterations one Loop or Scan node may run on the reference (--max-iterations;
  /// max_iterations= on the reference backends that set none, and the layerwise pass's golden
  /// run); a Loop that reaches it fails that row, naming the node. 0: no bound.
  uint64_t max_iterations = 0;
  InputOptions inputs;
  ComparisonOptions comparison;
  LayerwiseRunOptions layerwise;
  /// Files written when the comparison is done (each left untouched when empty): the inputs
  /// used, and every backend's outputs (golden ones under their names, the others as
  /// BACKEND/NAME; with the layerwise pass also every intermediate tensor's reference value).
  /// A .json path writes Polygraphy's formats (required for several samples), else .npz: the
  /// inputs as its input list (a list of {name: array}, one per sample), the outputs as its
  /// RunResults (one runner per backend that ran every sample, named by its spec, one
  /// IterationResult per sample; the first runner's also hold the intermediate values), which
  /// `polygraphy run --load-outputs` and RunResults.load read.
  std::filesystem::path save_inputs;
  std::filesystem::path save_outputs;
};

/// The layerwise pass of one sample: its report, or why it could not run.
struct SampleLayers {
  std::optional<LayerwiseReport> report;
  std::string error;  ///< one sentence when the pass could not run on this sample
  /// Whether every layerwise backend ran and no tensor failed (true when the pass did not run).
  bool agree() const;
};

struct RunResult {
  Model model;                   ///< the model as loaded (for the HTML view)
  std::filesystem::path source;  ///< RunOptions::model
  /// The comparison of every sample (samples[i] is the i-th sample that ran).
  SamplesRunReport report;
  std::vector<size_t> sample_ids;  ///< each sample's number in the full set
  size_t total_samples = 0;        ///< samples the source holds (before RunOptions::sample)
  /// Where the inputs came from: "" for generated (seed of sample 0 in `seed`), else the file.
  std::string inputs_source;
  uint64_t seed = 1;
  /// One per sample when the layerwise pass ran, else empty.
  std::vector<SampleLayers> layers;
  /// The first sample with a first divergent node (its repro folder was written).
  std::optional<size_t> repro_sample;
  /// With strict_providers: the sentence naming the backend that ran elsewhere, else "".
  std::string provider_problem;
  /// When every backend (two at least) failed on every sample and one of them found the model
  /// itself invalid (BackendRun::error_code kModelError: the reference's undefined tensor, a
  /// node's impossible shapes): the sentence saying so with each backend's reason, else "". The
  /// verdict is then kError, `onnxdbg run` exits 2 (a bad model, not a backend's failure), and
  /// no layerwise pass runs.
  std::string model_problem;
  /// With golden values and --golden-names suffix or --golden-layout auto|nhwc: the keys renamed
  /// and the tensors transposed (its notes are in `messages` too; `run --json` gives it as
  /// "golden_mapping").
  std::optional<GoldenMatchReport> golden_match;
  Messages messages;

  /// The overall verdict: kAgree only when every sample's outputs and layers agree and no
  /// provider problem was found; kError when a provider problem or a model problem was found, a
  /// backend failed, or the layerwise pass could not run on a backend; else kDisagree.
  Verdict verdict() const;
  /// The sentence behind verdict(), printed last by print_text and given as "verdict_line" by
  /// to_json: the outputs' verdict line (over all samples), unless the outputs agree and the
  /// layerwise pass does not; then what the pass found (the first divergent node and how many
  /// tensors are outside tolerance, or why it could not compare a backend).
  std::string verdict_line() const;
  /// Whether sample i's outputs or layers disagree (or a backend failed on it).
  bool sample_disagrees(size_t i) const;
  /// The sample the HTML page shows: the first that disagrees, else 0.
  size_t shown_sample() const;
};

/// Runs `options.model` as described above: loads it (a model error is returned), gets the
/// input samples, runs and compares each on every backend (a backend that fails is a failed
/// row, never an error of this call), runs the layerwise pass per sample when asked, writes
/// the repro folder and the --save-* files. Tensor shapes and dtypes are the model's; values in
/// the model's units. Errors (one sentence each, nothing run when they are found before the
/// backends): kInvalidArgument for contradictory options (iterations with load_inputs, a sample
/// number out of range, several samples with an .npz save path, golden outputs whose sample
/// count differs, a layerwise pass with no backend to compare, a budget too small for the first
/// sample); kModelError for a model that breaks the ONNX spec where no runtime can run it
/// (lint's structural errors: an undefined input, an op or attribute that does not exist, ...,
/// named with its node; nodes forming a cycle); nodes merely listed before their inputs'
/// producers run (the reference sorts them) with a note in `messages`; a model every backend
/// fails on as invalid is a result with RunResult::model_problem, not an error; those of
/// load_model, load_samples/check_samples, generate_inputs and the file writers; kCancelled when
/// ctx.cancel is set (checked between samples and passes).
Expected<RunResult> run(const RunOptions& options, const CallContext& ctx = {});

/// The JSON object `onnxdbg run --json` prints (README "run --json"): the comparison of one
/// sample (run_report_json) or of several (run_samples_json with a "samples" array), with the
/// layerwise keys (layerwise, layerwise_summary, first_divergent_node) when the pass ran, and
/// "golden_mapping" when RunResult::golden_match is set: {names, layout, renamed: [{key,
/// tensor}], transposed: [{rank, perm, tensors}], ambiguous, unfit, unknown_shape, notes}.
nlohmann::json to_json(const RunResult& result);

/// What `onnxdbg run` prints: the tables of every sample, the layerwise section and the verdict
/// line last. `color` adds ANSI colours.
void print_text(const RunResult& result, std::ostream& os, bool color);

/// The viewer's overlay of the shown sample (RunResult::shown_sample): the same JSON object
/// `run --json` prints for that sample alone, with its layerwise keys; `onnxdbg view MODEL
/// --report run.json` paints the same page.
report::ViewerOverlays run_overlays(const RunResult& result);

/// Writes the HTML view of the model painted with the shown sample's errors (every node's own
/// error with the layerwise pass) to `path` (one self-contained file). Errors: those of the
/// page writer (a path that cannot be written).
Status write_html(const RunResult& result, const std::filesystem::path& path);

/// One model run once on one backend (Python's `onnxdbg.run`): no comparison, the values
/// themselves.
struct BackendRunOptions {
  std::filesystem::path model;
  BackendSpec backend{"reference", {}};  ///< name and options, as in --backends
  /// The graph inputs (every input without an initializer, with its declared dtype and static
  /// dims); unset: generated as `onnxdbg run` generates sample 0 (`generate`).
  std::optional<TensorMap> inputs;
  InputGenOptions generate;
  /// Also return every tensor a main-graph node produces (subgraph values excepted): the
  /// reference's from its run, another backend's as extra graph outputs of one run.
  bool intermediates = false;
  /// Bytes of intermediate tensors held at once; more is an error (default 2 GiB).
  uint64_t memory_budget = option_defaults::layerwise_memory;
};

struct BackendRunResult {
  /// The inputs the model ran on: generated ones, or views of the given ones (not copies:
  /// valid while BackendRunOptions::inputs lives).
  TensorMap inputs;
  TensorMap outputs;        ///< every graph output, by name, in the model's dtypes and shapes
  TensorMap intermediates;  ///< with `intermediates`: every other main-graph node output
  std::string backend;      ///< BackendSpec::to_string()
  std::string describe;     ///< the engine and its version ("ONNX Runtime 1.29.0, CPU")
  std::vector<std::string> providers;        ///< execution providers the session used
  double load_seconds = 0, run_seconds = 0;  ///< session creation and the inference call, s
  Messages messages;  ///< the backend's warnings (an option it ignored, a provider fallback)
};

/// Loads options.model on options.backend and runs it once on the given or generated inputs.
/// Errors: those of load_model; kInvalidArgument for inputs that are not the model's graph
/// inputs (wrong name, dtype or static dims; check_samples), an unknown backend or an unknown or
/// unparsable backend option (create_backend: a usage error, Python's UsageError); kBackendError /
/// kUnsupported when the backend refuses, fails or crashes (isolated backends run in a worker
/// process); kInvalidArgument when the intermediate tensors need more than memory_budget;
/// kCancelled when ctx.cancel is set before the run.
Expected<BackendRunResult> run_backend(const BackendRunOptions& options,
                                       const CallContext& ctx = {});

}  // namespace onnxdbg::api
