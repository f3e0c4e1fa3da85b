// `onnxdbg run`: run a model on several backends with generated or loaded inputs, compare every
// output with golden values, print tables and a verdict (or one JSON object with --json). The
// work is api::run (include/onnxdbg/run.h); this file parses the flags and renders the result.
#include "onnxdbg/run.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "core/run_limits.h"

namespace onnxdbg::cli {

namespace {

struct RunArgs {
  std::string model;
  BackendArgs backends;
  InputArgs inputs;
  ComparisonArgs comparison;
  LimitArgs limits;
  std::string save_inputs, save_outputs;
  bool json = false;
  bool layerwise = false;
  bool isolate = false;
  std::string layerwise_memory = option_spec("layerwise_memory").default_text;
  std::string save_repro;
  bool strict_providers = false;
  std::string reference_accumulate;  // "" when --reference-accumulate is not given
  HtmlOutput html;
};

/// The flags as the API's options. Errors: a malformed flag value, named.
Expected<api::RunOptions> run_options(const RunArgs& a) {
  api::RunOptions o;
  o.model = a.model;
  ODB_ASSIGN_OR_RETURN(o.inputs, a.inputs.to_options());
  ODB_ASSIGN_OR_RETURN(o.backends, a.backends.to_specs());
  ODB_ASSIGN_OR_RETURN(o.comparison, a.comparison.to_options());
  o.reference_accumulate = a.reference_accumulate;
  ODB_ASSIGN_OR_RETURN(o.timeout_seconds, a.limits.timeout_seconds());
  ODB_ASSIGN_OR_RETURN(o.max_memory, a.limits.max_memory());
  o.max_iterations = a.limits.max_iterations();
  o.strict_providers = a.strict_providers;
  o.layerwise.enabled = a.layerwise;
  o.layerwise.isolate = a.isolate;
  o.layerwise.save_repro = a.save_repro;
  if (a.layerwise || a.isolate) {
    auto b = parse_memory_size(a.layerwise_memory);
    if (!b) return Status(b.status().code(), "--layerwise-memory: " + b.status().message());
    o.layerwise.memory_budget = *b;
  }
  o.save_inputs = a.save_inputs;
  o.save_outputs = a.save_outputs;
  return o;
}

/// The run's page: the shown sample's errors, with a note when there are several samples.
Status write_run_html(const RunArgs& a, const api::RunResult& r) {
  const size_t n = r.report.samples.size();
  const size_t shown = r.shown_sample();
  if (n > 1)
    std::cerr << "onnxdbg: note: the HTML page shows sample " << shown << " of " << n
              << (r.sample_disagrees(shown) ? " (the first that disagrees)"
                                            : " (all samples agree)")
              << "\n";
  return write_html_view(a.html, r.model, api::run_overlays(r), std::cerr);
}

int run_command(const RunArgs& a) {
  auto options = run_options(a);
  if (!options) return report_error(options.status());
  ProgressLine line(!a.json);
  auto result = api::run(*options, interruptible_context(line));
  line.clear();
  if (!result) return report_error(result.status());
  const api::RunResult& r = *result;
  api::print_messages(r.messages, std::cerr, !a.json);
  if (a.json)
    print_json(api::to_json(r));
  else
    api::print_text(r, std::cout, api::color_for(1));
  if (!a.html.path.empty())
    if (Status st = write_run_html(a, r); !st) return report_error(st);
  if (!r.provider_problem.empty()) return report_error(invalid_argument(r.provider_problem));
  // The last line printed (r.verdict_line()) names the cause of each status: 2 for a bad model
  // (model_problem), 1 for a disagreement or a backend failing on a valid model.
  if (!r.model_problem.empty()) return kExitUsage;
  return r.verdict() == Verdict::kAgree ? kExitOk : kExitMismatch;
}

void add_layerwise_options(CLI::App* cmd, RunArgs& a) {
  cmd->add_flag(flag_of("layerwise"), a.layerwise, help_of("layerwise"));
  cmd->add_option(flag_of("layerwise_memory"), a.layerwise_memory, help_of("layerwise_memory"))
      ->capture_default_str();
  cmd->add_flag(flag_of("isolate"), a.isolate, help_of("isolate"));
  cmd->add_option(flag_of("save_repro"), a.save_repro, help_of("save_repro"));
}

void add_save_options(CLI::App* cmd, RunArgs& a) {
  cmd->add_option(flag_of("save_inputs"), a.save_inputs, help_of("save_inputs"));
  cmd->add_option(flag_of("save_outputs"), a.save_outputs, help_of("save_outputs"));
}

void add_backend_options(CLI::App* cmd, RunArgs& a) {
  a.backends.add_to(cmd, "Comma-separated backends, the first gives the golden values");
  cmd->add_option(flag_of("reference_accumulate"), a.reference_accumulate,
                  help_of("reference_accumulate"))
      ->check(CLI::IsMember({"float", "double"}));
  a.limits.add_to(cmd,
                  "Seconds each backend may take to run a sample, onnxruntime and opencv to load "
                  "the model too (default: none for the reference, 300 for the others): the "
                  "reference is stopped between nodes, in Loop/Scan iterations and inside long "
                  "kernels, the others' worker is killed; that backend's row fails (\"timed out "
                  "after N s\"); also the golden reference run of --layerwise (sets timeout= on "
                  "every backend)");
  cmd->add_flag(flag_of("strict_providers"), a.strict_providers, help_of("strict_providers"));
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd =
      app.add_subcommand("run", "Run a model on several backends and compare their outputs.");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  add_backend_options(cmd, *args);
  InputArgs::Config inputs;
  inputs.iterations_help =
      "Number of generated input samples (sample i from seed --seed + i, so sample 0 is the "
      "single sample's input); each backend loads the model once and runs every sample, and each "
      "sample is compared and reported on its own (exit status 0 only when every sample agrees). "
      "Not with --load-inputs, whose file decides the samples";
  inputs.load_inputs_help =
      "Read inputs instead of generating them: a .npz file, a Polygraphy JSON input file "
      "(--save-inputs, data to-input), an ONNX test-data folder (input_K.pb, or test_data_set_N "
      "folders: one sample each), or a .pb/.npy file for a single-input model. Every sample it "
      "holds runs, each compared on its own (--sample K runs one)";
  args->inputs.add_to(cmd, inputs);
  args->comparison.add_to(cmd, {});
  add_save_options(cmd, *args);
  add_json_flag(cmd, args->json);
  add_layerwise_options(cmd, *args);
  add_html_option(cmd, args->html,
                  "each node coloured by its error (with --layerwise: every node's own error), "
                  "the first divergent node centred; with several samples, those of the first "
                  "sample that disagrees (sample 0 when all agree)");
  cmd->footer(
      "Exit status: 0 when all backends agree (on every sample, and every intermediate tensor "
      "with --layerwise), 1 when they disagree or a backend fails on a valid model (on any "
      "sample), 2 on a usage or model error (also when every backend failed and one found the "
      "model invalid), or with --strict-providers when a provider was missing or replaced. The "
      "last line states the verdict and its cause.");
  cmd->callback([args, &ctx] { ctx.exit_code = run_command(*args); });
}

}  // namespace onnxdbg::cli
