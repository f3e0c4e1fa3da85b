// `onnxdbg reduce`: shrink a failing model to a minimal failing one, with an external --check
// command (Polygraphy's `debug reduce` options) or a built-in oracle (--fail-on), printing a
// progress line, a summary table, or one JSON object with --json.
#include "onnxdbg/reduce.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "cli/options.h"
#include "cli/progress.h"

namespace onnxdbg::cli {

namespace {

std::vector<std::string>& check_command_storage() {
  static std::vector<std::string> cmd;
  return cmd;
}

struct ReduceArgs {
  std::string model, output;
  std::string executor{option_defaults::executor}, address;
  bool check = false;
  std::string iter_artifact = "onnxdbg_debug.onnx";
  std::string iter_inputs = "onnxdbg_debug_inputs.npz";
  std::optional<int> fail_code;
  bool ignore_fail_code = false;
  std::vector<std::string> fail_regex;
  double check_timeout = 0;
  std::string timeout_means = "pass";
  std::vector<std::string> fail_on;
  BackendArgs backends;
  ComparisonArgs comparison;
  InputArgs inputs;
  LimitArgs limits;
  std::vector<std::string> model_input_shapes;
  std::string mode{option_defaults::mode};
  std::vector<std::string> strategies;
  int jobs = option_defaults::jobs;
  std::string artifacts, min_good, journal;
  bool resume = false;
  bool json = false;
  bool fallback_shapes = false;
  bool no_reduce_inputs = false, no_reduce_outputs = false;
  bool any_failure = false;
  HtmlOutput html;
};

/// --check CMD... and its options.
Status check_options(const ReduceArgs& a, reduce::CheckOptions& co) {
  if (!a.check) return Status::ok();
  co.command = check_command_storage();
  if (co.command.empty()) return invalid_argument("--check needs a command after it");
  if (a.timeout_means != "pass" && a.timeout_means != "fail")
    return invalid_argument("--timeout-means must be pass or fail");
  co.iter_artifact = a.iter_artifact;
  co.iter_inputs = a.iter_inputs;
  co.fail_code = a.fail_code;
  co.ignore_fail_code = a.ignore_fail_code;
  co.fail_regex = a.fail_regex;
  co.timeout_seconds = a.check_timeout;
  co.timeout_means_fail = a.timeout_means == "fail";
  return Status::ok();
}

/// --fail-on and the options of the built-in oracle.
Status builtin_options(const ReduceArgs& a, api::BuiltinOracleOptions& bo) {
  if (a.fail_on.empty()) return Status::ok();
  if (a.check) return invalid_argument("use either --check or --fail-on, not both");
  for (const auto& f : split_list(a.fail_on)) {
    ODB_ASSIGN_OR_RETURN(reduce::FailOn v, reduce::fail_on_from_name(f));
    bo.fail_on.insert(v);
  }
  ODB_ASSIGN_OR_RETURN(bo.backends, a.backends.to_specs());
  ODB_ASSIGN_OR_RETURN(api::ComparisonOptions c, a.comparison.to_options());
  bo.tolerance = c.tolerance;
  bo.error_stat = c.error_stat;
  bo.fail_regex = a.fail_regex;
  return Status::ok();
}

/// The flags as the API's options. Errors: a malformed flag value, named.
Expected<api::ReduceOptions> reduce_options(const ReduceArgs& a) {
  api::ReduceOptions o;
  o.model = a.model;
  o.output = a.output;
  if (Status st = check_options(a, o.check); !st) return st;
  if (Status st = builtin_options(a, o.builtin); !st) return st;
  o.jobs = a.jobs;
  o.executor = a.executor;
  o.address = a.address;
  ODB_ASSIGN_OR_RETURN(o.timeout_seconds, a.limits.timeout_seconds());
  ODB_ASSIGN_OR_RETURN(o.max_memory, a.limits.max_memory());
  o.max_iterations = a.limits.max_iterations();
  o.load_inputs = a.inputs.load_inputs();
  ODB_ASSIGN_OR_RETURN(o.generate, a.inputs.generate());
  o.iterations = a.inputs.iterations();
  if (!a.model_input_shapes.empty())
    if (Status st = parse_input_shapes(a.model_input_shapes, o.model_input_shapes); !st) return st;
  o.mode = a.mode;
  o.strategies = split_list(a.strategies);
  o.artifacts = a.artifacts;
  o.min_good = a.min_good;
  o.journal = a.journal;
  o.resume = a.resume;
  o.fallback_shapes = a.fallback_shapes;
  o.keep_inputs = a.no_reduce_inputs;
  o.keep_outputs = a.no_reduce_outputs;
  o.any_failure = a.any_failure;
  return o;
}

/// The reduced nodes highlighted inside the original model.
void write_reduce_html(const ReduceArgs& a, const api::ReduceResult& r) {
  if (!r.report || !r.report->original_fails || a.html.path.empty()) return;
  if (Status st = write_html_view(a.html, r.original, api::reduce_overlays(r), std::cerr); !st)
    std::cerr << "onnxdbg: warning: " << st.message() << "\n";
}

int reduce_command(const ReduceArgs& a) {
  auto options = reduce_options(a);
  if (!options) return report_error(options.status());
  ProgressLine line(!a.json, "");
  auto result = api::reduce(*options, interruptible_context(line));
  line.clear();
  if (!result) return report_error(result.status());
  const api::ReduceResult& r = *result;
  api::print_messages(r.messages, std::cerr, !a.json);
  if (!a.json)
    std::cout << "reduce: " << a.model << ", " << r.nodes << " nodes; oracle: " << r.oracle << "\n";
  if (!r.stopped) {
    if (r.best_so_far) std::cerr << "onnxdbg: the best model so far is in " << a.output << "\n";
    return report_error(r.stopped);
  }
  if (a.json)
    print_json(api::to_json(r));
  else
    api::print_text(r, std::cout);
  write_reduce_html(a, r);
  return r.report->original_fails ? kExitOk : kExitMismatch;
}

/// --check CMD... and the options of the check command (Polygraphy's `debug reduce` names).
void add_check_options(CLI::App* cmd, ReduceArgs& a) {
  cmd->add_flag("--check", a.check,
                "Everything after --check is the check command, run on each candidate (written to "
                "--iter-artifact); it fails on a non-zero exit code. Must come last.");
  cmd->add_option("--iter-artifact", a.iter_artifact, "Where each candidate is written for --check")
      ->capture_default_str();
  cmd->add_option("--iter-inputs", a.iter_inputs,
                  "Where each candidate's input values (golden values, .npz) are written for "
                  "--check")
      ->capture_default_str();
  cmd->add_option("--fail-code", a.fail_code, "Only this exit code of the check counts as failing");
  cmd->add_flag("--ignore-fail-code", a.ignore_fail_code,
                "The exit code never decides; only --fail-regex does");
  cmd->add_option(flag_of("fail_regex"), a.fail_regex, help_of("fail_regex"));
  cmd->add_option("--check-timeout", a.check_timeout,
                  "Seconds after which a check is killed (0 = none)");
  cmd->add_option("--timeout-means", a.timeout_means,
                  "What a check that times out counts as: pass or fail")
      ->capture_default_str();
}

}  // namespace

void take_check_command(std::vector<std::string>& args) {
  if (args.empty() || args[0] != "reduce") return;
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i] == "--check") {
      check_command_storage().assign(args.begin() + static_cast<long>(i) + 1, args.end());
      args.resize(i + 1);
      return;
    }
}

void add_reduce_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<ReduceArgs>();
  std::string strategies_help = "Strategies to run instead of --mode's, comma-separated:";
  for (const auto& s : api::reduce_strategies()) strategies_help += "\n  " + s.name + ": " + s.help;
  CLI::App* cmd = app.add_subcommand(
      "reduce",
      "Reduce a failing model to a minimal failing model: the oracle (--check CMD... or --fail-on) "
      "says whether a candidate still fails; the smallest failing model is written to -o after "
      "every success.");
  cmd->add_option("model", args->model, "ONNX model file that fails")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the reduced model")->required();
  add_check_options(cmd, *args);
  cmd->add_option(flag_of("fail_on"), args->fail_on, help_of("fail_on"));
  cmd->add_flag(flag_of("any_failure"), args->any_failure, help_of("any_failure"));
  args->backends.add_to(cmd, "Backends of the built-in oracle; the first gives the golden values");
  args->limits.add_to(cmd,
                      "Seconds each backend run of the built-in oracle may take (a run past it "
                      "is an error, \"timed out after N s\"; sets timeout= on every backend), "
                      "and the golden values' reference runs of the original together "
                      "(--check commands have --check-timeout)");
  ComparisonArgs::Config comparison;
  comparison.validate = false;
  comparison.load_outputs = false;
  comparison.tolerance_help_suffix = "; for --fail-on mismatch";
  args->comparison.add_to(cmd, comparison);
  InputArgs::Config inputs;
  inputs.input_shapes = false;
  inputs.sample = false;
  inputs.iterations_help =
      "Input samples (seeds seed, seed+1, ...); a candidate fails if any sample does";
  inputs.load_inputs_help =
      "Input values (.npz, .pb, .npy or a test-data folder) instead of generated ones; an .npz "
      "may also hold intermediate tensors (layerwise data), used as golden values";
  args->inputs.add_to(cmd, inputs);
  cmd->add_option(flag_of("model_input_shapes") + "," + flag_of("input_shapes"),
                  args->model_input_shapes, help_of("model_input_shapes"));
  cmd->add_option(flag_of("mode"), args->mode, help_of("mode"))->capture_default_str();
  cmd->add_option("--strategies", args->strategies, strategies_help);
  cmd->add_option("-j," + flag_of("jobs"), args->jobs, help_of("jobs"))->capture_default_str();
  cmd->add_option(flag_of("executor"), args->executor,
                  "Where --check commands run: local (here) or ray (each a Ray task on the "
                  "cluster at --address, the candidate sent with it; -j tasks at once; pip "
                  "install ray). The journal, cache and result are a local run's")
      ->check(CLI::IsMember({"local", "ray"}))
      ->capture_default_str();
  cmd->add_option(flag_of("address"), args->address, help_of("address"));
  cmd->add_option("--artifacts", args->artifacts,
                  "Keep every candidate in DIR/good and DIR/bad as iter_<N>.onnx");
  cmd->add_option("--min-good", args->min_good,
                  "Write the passing candidate closest to the reduced model here");
  cmd->add_option("--journal", args->journal,
                  "Verdict journal (default: OUTPUT.journal), read back by --resume");
  cmd->add_flag("--resume", args->resume,
                "Reuse the journal's verdicts: an interrupted reduction replays to where it "
                "stopped without calling the oracle again");
  cmd->add_flag("--force-fallback-shape-inference", args->fallback_shapes,
                "Take intermediate shapes from the reference's values, not ONNX shape inference");
  cmd->add_flag(flag_of("keep_inputs"), args->no_reduce_inputs, help_of("keep_inputs"));
  cmd->add_flag(flag_of("keep_outputs"), args->no_reduce_outputs, help_of("keep_outputs"));
  add_json_flag(cmd, args->json, "Print one JSON object instead of text");
  add_html_option(cmd, args->html, "the reduced model's nodes highlighted in the original");
  cmd->callback([args, &ctx] { ctx.exit_code = reduce_command(*args); });
}

}  // namespace onnxdbg::cli
