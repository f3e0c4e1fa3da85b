// `onnxdbg bisect-optimizers`: which of ONNX Runtime's graph optimizations changed the numbers.
// The work is api::bisect_optimizers (include/onnxdbg/bisect_optimizers.h); this file parses
// the flags (run's input, comparison and limit groups) and renders the result.
#include "onnxdbg/bisect_optimizers.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "cli/options.h"
#include "cli/progress.h"

namespace onnxdbg::cli {

namespace {

struct BisectArgs {
  std::string model;
  std::string backend = "onnxruntime:opt=all";
  std::string against = "onnxruntime:opt=disabled";
  InputArgs inputs;
  ComparisonArgs comparison;
  LimitArgs limits;
  std::string save_models;
  bool json = false;
  HtmlOutput html;
};

/// One backend spec of --backend / --against. Errors: those of parse_backend_list.
Expected<BackendSpec> one_backend(const std::string& flag, const std::string& text) {
  auto specs = parse_backend_list(text);
  if (!specs) return Status(specs.status().code(), flag + ": " + specs.status().message());
  if (specs->size() != 1) return invalid_argument(flag + " takes one backend, not '" + text + "'");
  return specs->front();
}

Expected<api::BisectOptimizersOptions> bisect_options(const BisectArgs& a) {
  api::BisectOptimizersOptions o;
  o.model = a.model;
  ODB_ASSIGN_OR_RETURN(o.backend, one_backend("--backend", a.backend));
  ODB_ASSIGN_OR_RETURN(o.against, one_backend("--against", a.against));
  ODB_ASSIGN_OR_RETURN(o.inputs, a.inputs.to_options());
  ODB_ASSIGN_OR_RETURN(o.comparison, a.comparison.to_options());
  ODB_ASSIGN_OR_RETURN(o.timeout_seconds, a.limits.timeout_seconds());
  ODB_ASSIGN_OR_RETURN(o.max_memory, a.limits.max_memory());
  o.max_iterations = a.limits.max_iterations();
  o.save_models = a.save_models;
  return o;
}

int bisect_command(const BisectArgs& a) {
  auto options = bisect_options(a);
  if (!options) return report_error(options.status());
  ProgressLine line(!a.json);
  auto result = api::bisect_optimizers(*options, interruptible_context(line));
  line.clear();
  if (!result) return report_error(result.status());
  api::print_messages(result->messages, std::cerr, !a.json);
  if (a.json)
    print_json(api::to_json(*result));
  else
    api::print_text(*result, std::cout);
  if (!a.html.path.empty()) {
    if (Status st =
            write_html_view(a.html, result->loaded_model, api::bisect_overlays(*result), std::cerr);
        !st)
      return report_error(st);
  }
  return result->outcome == api::BisectOutcome::kNoDifference ? kExitOk : kExitMismatch;
}

}  // namespace

void add_bisect_optimizers_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<BisectArgs>();
  auto* cmd = app.add_subcommand(
      "bisect-optimizers",
      "Find which of ONNX Runtime's graph optimizations change a model's outputs.");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--backend", args->backend,
                  "The ONNX Runtime configuration whose outputs differ, with its options "
                  "(onnxruntime:opt=all, onnxruntime:opt=basic:threads=1, "
                  "onnxruntime:config.optimization.enable_gelu_approximation=1)")
      ->capture_default_str();
  cmd->add_option("--against", args->against,
                  "The baseline it is compared with: a backend (onnxruntime:opt=disabled, or "
                  "reference); --load-outputs compares with golden outputs instead")
      ->capture_default_str();
  InputArgs::Config inputs;
  inputs.iterations_help =
      "Number of generated input samples; every session runs all of them, and a set of "
      "optimizations counts as restoring agreement only when every sample agrees";
  inputs.load_inputs_help =
      "Read inputs instead of generating them (.npz, Polygraphy JSON, an ONNX test-data folder, "
      ".pb/.npy), as run's --load-inputs";
  args->inputs.add_to(cmd, inputs);
  args->comparison.add_to(cmd, {});
  args->limits.add_to(cmd, "Seconds each session may take to load and run the model (default 300)");
  cmd->add_option("--save-models", args->save_models,
                  "Folder for the models ONNX Runtime optimized with and without the culprits "
                  "(optimized_with_culprits.onnx, optimized_without_culprits.onnx)");
  add_json_flag(cmd, args->json);
  add_html_option(cmd, args->html,
                  "the original nodes the culprits fused or removed, and the first divergent "
                  "node, highlighted");
  cmd->footer(
      "How: the outputs of --backend and --against are compared on the same inputs; the graph "
      "transformers ONNX Runtime's log says changed the model are the candidates; a binary "
      "search, one culprit at a time (reduce's minimal_by_bisection), finds a set whose disabling "
      "(onnxruntime:disable=NAME+NAME, ONNX Runtime's optimization.disable_specified_optimizers) "
      "restores agreement, checked 1-minimal session by session; a level's rule set is opened "
      "into its rules, and the optimized "
      "models with and without the set name the nodes it fused.\n"
      "Exit status: 0 when the outputs agree (nothing to bisect), 1 when they differ (the "
      "culprits found or not), 2 on a usage or model error, or when a backend cannot load or "
      "run the model.");
  cmd->callback([args, &ctx] { ctx.exit_code = bisect_command(*args); });
}

}  // namespace onnxdbg::cli
