// `onnxdbg reduce`: shrink a failing model to a minimal failing one, with an external --check
// command (Polygraphy's `debug reduce` options) or a built-in oracle (--fail-on), printing a
// progress line, a summary table, or one JSON object with --json.
#include "reduce/reduce.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "data/npz.h"
#include "data/test_data.h"
#include "model/model.h"
#include "reduce/strategies/strategies.h"
#include "report/table.h"
#include "runner/input_gen.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::cli {

namespace {

std::vector<std::string>& check_command_storage() {
  static std::vector<std::string> cmd;
  return cmd;
}

struct ReduceArgs {
  std::string model, output;
  bool check = false;
  std::string iter_artifact = "onnxdbg_debug.onnx";
  std::string iter_inputs = "onnxdbg_debug_inputs.npz";
  std::optional<int> fail_code;
  bool ignore_fail_code = false;
  std::vector<std::string> fail_regex;
  double check_timeout = 0;
  std::string timeout_means = "pass";
  std::vector<std::string> fail_on;
  std::string backends = "reference,onnxruntime";
  std::vector<std::string> atol, rtol;
  std::string error_stat = "elemwise";
  std::string load_inputs;
  uint64_t seed = 1;
  int iterations = 1;
  std::vector<std::string> val_range;
  std::vector<std::string> model_input_shapes;
  std::string mode = "full";
  std::vector<std::string> strategies;
  int jobs = 1;
  std::string artifacts, min_good, journal;
  bool resume = false;
  bool json = false;
  bool fallback_shapes = false;
  bool no_reduce_inputs = false, no_reduce_outputs = false;
  HtmlOutput html;
};

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    size_t pos = 0;
    while (pos <= item.size()) {
      const size_t comma = item.find(',', pos);
      std::string s =
          item.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (!s.empty()) out.push_back(s);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return out;
}

// A private folder for candidates the oracles write; removed when the command ends.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "onnxdbg-reduce-XXXXXX").string();
    if (mkdtemp(tmpl.data())) path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

int reduce_command(const ReduceArgs& a) {
  using namespace reduce;
  const auto& check_cmd = check_command_storage();
  if (a.check && check_cmd.empty())
    return report_error(invalid_argument("--check needs a command after it"));
  if (!a.check && a.fail_on.empty())
    return report_error(invalid_argument(
        "say what failing means: --check CMD... (an external command) or --fail-on "
        "mismatch|error|nan (built in)"));
  if (a.check && !a.fail_on.empty())
    return report_error(invalid_argument("use either --check or --fail-on, not both"));
  if (a.timeout_means != "pass" && a.timeout_means != "fail")
    return report_error(invalid_argument("--timeout-means must be pass or fail"));
  if (a.jobs < 1) return report_error(invalid_argument("-j must be at least 1"));
  if (a.iterations < 1) return report_error(invalid_argument("--iterations must be at least 1"));
  std::vector<std::string> strategies = split_list(a.strategies);
  if (strategies.empty()) {
    auto s = strategies_for_mode(a.mode);
    if (!s) return report_error(s.status());
    strategies = *s;
  }

  auto loaded = load_model(a.model);
  if (!loaded) return report_error(loaded.status());
  for (const auto& w : loaded->warnings) std::cerr << "onnxdbg: warning: " << w << "\n";
  Original original;
  original.model = std::move(loaded->proto);
  original.base_dir = loaded->base_dir;
  original.fallback_shapes = a.fallback_shapes;
  original.keep_inputs = a.no_reduce_inputs;
  original.keep_outputs = a.no_reduce_outputs;
  if (!a.model_input_shapes.empty()) {
    std::map<std::string, Shape> shapes;
    if (Status st = parse_input_shapes(a.model_input_shapes, shapes); !st) return report_error(st);
    if (Status st = surgeon::override_input_shapes(original.model, shapes); !st)
      return report_error(st.with_context("--model-input-shapes"));
  }
  // Input samples: loaded (one), or generated with seeds seed, seed+1, ...
  if (!a.load_inputs.empty()) {
    // An .npz may hold layerwise values too (inputs plus intermediate tensors, as `onnxdbg run
    // --save-outputs` or Polygraphy's `data to-input` write): those become golden values.
    Expected<TensorMap> t = std::filesystem::path(a.load_inputs).extension() == ".npz"
                                ? load_npz(a.load_inputs)
                                : load_tensors(a.load_inputs, original.model.graph());
    if (!t) return report_error(t.status());
    TensorMap sample;
    for (auto& [name, v] : *t) {
      bool is_input = false;
      for (const auto& sig : model_inputs(original.model.graph())) is_input |= sig.name == name;
      (is_input ? sample : original.provided).insert_or_assign(name, std::move(v));
    }
    original.samples.push_back(std::move(sample));
  } else {
    InputGenOptions gen;
    if (Status st = parse_value_ranges(a.val_range, gen); !st) return report_error(st);
    for (int i = 0; i < a.iterations; ++i) {
      gen.seed = a.seed + static_cast<uint64_t>(i);
      auto t = generate_inputs(original.model.graph(), gen);
      if (!t) {
        // A check command may not need values; say why there are none and go on.
        if (a.check) {
          std::cerr << "onnxdbg: warning: no input values (" << t.status().message()
                    << "); candidates get types only\n";
          break;
        }
        return report_error(
            Status(t.status()).with_context("generating inputs (use --model-input-shapes)"));
      }
      original.samples.push_back(std::move(*t));
    }
  }
  const bool tty = isatty(2) && !a.json;
  if (tty) std::cerr << "[onnxdbg] computing golden values on the reference..." << std::flush;
  if (Status st = prepare_original(original); !st) return report_error(st);
  if (tty) std::cerr << "\r\x1b[K";
  if (!original.golden_error.empty())
    std::cerr << "onnxdbg: warning: the reference cannot run the model, so candidates get no "
                 "golden values (only types): "
              << original.golden_error << "\n";

  TempDir tmp;
  if (tmp.path.empty()) return report_error(invalid_argument("cannot create a temporary folder"));
  std::unique_ptr<Oracle> oracle;
  if (a.check) {
    CheckOptions co;
    co.command = check_cmd;
    co.iter_artifact = a.iter_artifact;
    co.iter_inputs = a.iter_inputs;
    co.fail_code = a.fail_code;
    co.ignore_fail_code = a.ignore_fail_code;
    co.fail_regex = a.fail_regex;
    co.timeout_seconds = a.check_timeout;
    co.timeout_means_fail = a.timeout_means == "fail";
    co.jobs = a.jobs;
    co.work_dir = tmp.path;
    auto o = make_check_oracle(co);
    if (!o) return report_error(o.status());
    oracle = std::move(*o);
  } else {
    BuiltinOptions bo;
    for (const auto& f : split_list(a.fail_on)) {
      auto v = fail_on_from_name(f);
      if (!v) return report_error(v.status());
      bo.fail_on.insert(*v);
    }
    for (const auto& item : split_list({a.backends})) {
      auto spec = BackendSpec::parse(item);
      if (!spec) return report_error(spec.status());
      if (Status st = validate_backend_spec(*spec); !st) return report_error(st);
      bo.backends.push_back(*spec);
    }
    if (Status st = parse_tolerance_args(a.atol, a.rtol, bo.tolerance); !st)
      return report_error(st);
    auto stat = error_stat_from_name(a.error_stat);
    if (!stat) return report_error(stat.status());
    bo.error_stat = *stat;
    bo.fail_regex = a.fail_regex;
    bo.work_dir = tmp.path;
    bo.jobs = a.jobs;
    if (original.golden.empty())
      return report_error(invalid_argument(
          "built-in oracles feed candidates the golden values of the reference, which cannot run "
          "this model; use --check instead"));
    auto o = make_builtin_oracle(bo);
    if (!o) return report_error(o.status());
    oracle = std::move(*o);
  }

  ReduceOptions ro;
  ro.strategies = strategies;
  ro.reducer.output = a.output;
  ro.reducer.journal = a.journal.empty() ? a.output + ".journal" : a.journal;
  ro.reducer.resume = a.resume;
  ro.reducer.artifacts = a.artifacts;
  ro.min_good = a.min_good;
  if (tty)
    ro.reducer.progress = [](const std::string& s) { std::cerr << "\r\x1b[K" << s << std::flush; };
  const int64_t n = original.model.graph().node_size();
  if (!a.json)
    std::cout << "reduce: " << a.model << ", " << n << " nodes; oracle: " << oracle->describe()
              << "\n";
  auto rep = reduce_model(original, *oracle, ro);
  if (tty) std::cerr << "\r\x1b[K";
  if (!rep) {
    std::error_code ec;
    if (std::filesystem::exists(a.output, ec))
      std::cerr << "onnxdbg: the best model so far is in " << a.output << "\n";
    return report_error(Status(rep.status()).with_context("while reducing " + a.model));
  }
  auto write_html = [&] {
    if (!rep->original_fails || a.html.path.empty()) return;
    // The reduced nodes highlighted inside the original model.
    LoadedModel shown;
    shown.proto = original.model;
    shown.path = a.model;
    shown.base_dir = original.base_dir;
    report::ViewerOverlays ov;
    ov.highlight = report::HighlightOverlay{"reduced model",
                                            std::to_string(rep->nodes_after) + " of " +
                                                std::to_string(rep->nodes_before) +
                                                " nodes still fail (" + oracle->describe() + ")",
                                            rep->kept_nodes};
    if (Status st = write_html_view(a.html, shown, std::move(ov), std::cerr); !st)
      std::cerr << "onnxdbg: warning: " << st.message() << "\n";
  };
  if (a.json) {
    std::cout << report_json(*rep) << "\n";
    write_html();
    return rep->original_fails ? kExitOk : kExitMismatch;
  }
  if (!rep->original_fails) {
    std::cout << "the original model does not fail (" << rep->original_detail
              << "), so there is nothing to reduce; check the oracle options\n";
    return kExitMismatch;
  }
  std::cout << "the original model fails: " << rep->original_detail << "\n";
  std::string kept;
  for (size_t i = 0; i < rep->kept_nodes.size() && i < 12; ++i)
    kept += (i ? ", " : "") + rep->kept_nodes[i];
  if (rep->kept_nodes.size() > 12) kept += ", ...";
  std::cout << "reduced " << rep->nodes_before << " -> " << rep->nodes_after
            << (rep->nodes_after == 1 ? " node" : " nodes") << " in " << rep->passes
            << (rep->passes == 1 ? " pass" : " passes") << ": " << kept << "\n";
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("none") : s;
  };
  std::cout << "  inputs: " << join(rep->inputs) << "; outputs: " << join(rep->outputs) << "\n";
  char line[256];
  std::snprintf(
      line, sizeof line,
      "  %lld oracle calls, %lld cache hits, %lld invalid candidates skipped, %lld timeouts, "
      "%.2f s\n",
      static_cast<long long>(rep->oracle_calls), static_cast<long long>(rep->cache_hits),
      static_cast<long long>(rep->invalid_skipped), static_cast<long long>(rep->timeouts),
      rep->seconds);
  std::cout << line;
  report::Table t({"strategy", "runs", "oracle calls", "nodes removed", "seconds"},
                  {report::Align::kLeft, report::Align::kRight, report::Align::kRight,
                   report::Align::kRight, report::Align::kRight});
  for (const auto& s : rep->strategies) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.2f", s.seconds);
    t.add_row({s.name, std::to_string(s.runs), std::to_string(s.oracle_calls),
               std::to_string(s.nodes_removed), secs});
  }
  t.print(std::cout);
  for (const auto& note : rep->notes) std::cout << "note: " << note << "\n";
  if (rep->flaky)
    std::cout << "warning: the reduced model passed when tested again: the oracle is flaky, so "
                 "the result may not fail reliably\n";
  std::cout << "wrote " << rep->output;
  if (!rep->min_good.empty())
    std::cout << "; min-good (" << rep->min_good_nodes
              << (rep->min_good_nodes == 1 ? " node" : " nodes") << ", passes): " << rep->min_good;
  std::cout << "\n" << std::flush;
  write_html();
  return kExitOk;
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
  for (const auto& s : reduce::strategy_table()) strategies_help += "\n  " + s.name + ": " + s.help;
  CLI::App* cmd = app.add_subcommand(
      "reduce",
      "Reduce a failing model to a minimal failing model: the oracle (--check CMD... or --fail-on) "
      "says whether a candidate still fails; the smallest failing model is written to -o after "
      "every success.");
  cmd->add_option("model", args->model, "ONNX model file that fails")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the reduced model")->required();
  cmd->add_flag("--check", args->check,
                "Everything after --check is the check command, run on each candidate (written to "
                "--iter-artifact); it fails on a non-zero exit code. Must come last.");
  cmd->add_option("--iter-artifact", args->iter_artifact,
                  "Where each candidate is written for --check")
      ->capture_default_str();
  cmd->add_option("--iter-inputs", args->iter_inputs,
                  "Where each candidate's input values (golden values, .npz) are written for "
                  "--check")
      ->capture_default_str();
  cmd->add_option("--fail-code", args->fail_code,
                  "Only this exit code of the check counts as failing");
  cmd->add_flag("--ignore-fail-code", args->ignore_fail_code,
                "The exit code never decides; only --fail-regex does");
  cmd->add_option("--fail-regex", args->fail_regex,
                  "Regex that the check's stdout/stderr (or, with --fail-on error, the backend's "
                  "error) must match to count as failing (repeatable: any matches)");
  cmd->add_option("--check-timeout", args->check_timeout,
                  "Seconds after which a check is killed (0 = none)");
  cmd->add_option("--timeout-means", args->timeout_means,
                  "What a check that times out counts as: pass or fail")
      ->capture_default_str();
  cmd->add_option("--fail-on", args->fail_on,
                  "Built-in oracle, no subprocess per check: mismatch (outputs of --backends "
                  "disagree), error (a backend refuses or crashes), nan (NaN/Inf from finite "
                  "inputs); comma-separated or repeated");
  cmd->add_option("--backends", args->backends,
                  "Backends of the built-in oracle; the first gives the golden values")
      ->capture_default_str();
  cmd->add_option("--atol", args->atol, "Absolute tolerance for --fail-on mismatch (default 1e-5)");
  cmd->add_option("--rtol", args->rtol, "Relative tolerance for --fail-on mismatch (default 1e-5)");
  cmd->add_option("--check-error-stat", args->error_stat,
                  "elemwise, max, mean or median (see onnxdbg run)")
      ->capture_default_str();
  cmd->add_option(
      "--load-inputs", args->load_inputs,
      "Input values (.npz, .pb, .npy or a test-data folder) instead of generated ones; an .npz "
      "may also hold intermediate tensors (layerwise data), used as golden values");
  cmd->add_option("--seed", args->seed, "Seed for generated inputs")->capture_default_str();
  cmd->add_option("--iterations", args->iterations,
                  "Input samples (seeds seed, seed+1, ...); a candidate fails if any sample does")
      ->capture_default_str();
  cmd->add_option("--val-range", args->val_range, "Generated value range, as in onnxdbg run");
  cmd->add_option("--model-input-shapes", args->model_input_shapes,
                  "Fix dynamic input shapes before reducing: NAME:1x3x224x224 (repeatable)");
  cmd->add_option("--mode", args->mode,
                  "bisect or linear (Polygraphy's), or full (ddmin over nodes, then branches, "
                  "inputs, attributes, initializers; repeated while nodes shrink)")
      ->capture_default_str();
  cmd->add_option("--strategies", args->strategies, strategies_help);
  cmd->add_option("-j,--jobs", args->jobs,
                  "Candidates tested at once (check commands, or built-in oracle runs on "
                  "their own threads and workers)")
      ->capture_default_str();
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
  cmd->add_flag("--no-reduce-inputs", args->no_reduce_inputs,
                "Keep the model's graph inputs (cut only the output side)");
  cmd->add_flag("--no-reduce-outputs", args->no_reduce_outputs,
                "Keep the model's graph outputs (cut only the input side)");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of text");
  add_html_option(cmd, args->html, "the reduced model's nodes highlighted in the original");
  cmd->callback([args, &ctx] { ctx.exit_code = reduce_command(*args); });
}

}  // namespace onnxdbg::cli
