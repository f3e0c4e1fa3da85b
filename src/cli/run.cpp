// `onnxdbg run`: run a model on several backends with generated or loaded inputs, compare every
// output with the first backend's, print tables and a verdict (or one JSON object with --json).
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <iostream>
#include <optional>

#include "backends/backend.h"
#include "backends/reference/reference_backend.h"
#include "cli/commands.h"
#include "cli/html_output.h"
#include "compare/layerwise.h"
#include "data/npz.h"
#include "data/samples.h"
#include "model/model.h"
#include "reference/interpreter.h"
#include "report/layerwise_report.h"
#include "report/run_report.h"
#include "report/table.h"
#include "runner/compare_run.h"
#include "runner/input_gen.h"
#include "runner/layer_values.h"

namespace onnxdbg::cli {

namespace {

struct RunArgs {
  std::string model;
  std::string backends = "reference,onnxruntime";
  uint64_t seed = 1;
  std::vector<std::string> val_range;
  std::vector<std::string> input_shapes;
  std::vector<std::string> atol;
  std::vector<std::string> rtol;
  std::string error_stat = "elemwise";
  std::string load_inputs;
  std::string load_outputs;
  size_t sample = 0;
  std::string save_inputs;
  std::string save_outputs;
  bool validate = false;
  bool json = false;
  bool layerwise = false;
  bool isolate = false;
  std::string layerwise_memory = "2GiB";
  std::string save_repro;
  bool strict_providers = false;
  std::string reference_accumulate;  // "" when --reference-accumulate is not given
  HtmlOutput html;
};

/// The default repro folder: ./onnxdbg-repro/<model stem>_<node>, with only safe characters.
std::string default_repro_dir(const std::string& model, const LayerTensor& t) {
  std::string leaf = std::filesystem::path(model).stem().string() + "_" +
                     (t.node.empty() ? t.op_type + "_" + std::to_string(t.node_index) : t.node);
  for (char& c : leaf)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return (std::filesystem::path("onnxdbg-repro") / leaf).string();
}

/// With --strict-providers: one sentence naming the first backend that did not run on the
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

/// --reference-accumulate: sets accumulate= on every reference backend of `specs` (a different
/// value given there is a usage error) and returns the options of the golden reference run of
/// --layerwise: those of the first reference backend (accumulate, threads, random_seed), else
/// the defaults with the flag's accumulate.
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

int run_command(const RunArgs& a) {
  auto specs = parse_backend_list(a.backends);
  if (!specs) return report_error(specs.status());
  auto golden_options = apply_reference_accumulate(a.reference_accumulate, *specs);
  if (!golden_options) return report_error(golden_options.status());
  ToleranceSpec tol;
  if (Status st = parse_tolerance_args(a.atol, a.rtol, tol); !st) return report_error(st);
  auto stat = error_stat_from_name(a.error_stat);
  if (!stat) return report_error(stat.status());
  InputGenOptions gen;
  gen.seed = a.seed;
  if (Status st = parse_input_shapes(a.input_shapes, gen.shapes); !st) return report_error(st);
  if (Status st = parse_value_ranges(a.val_range, gen); !st) return report_error(st);

  uint64_t budget = 0;
  std::vector<BackendSpec> layer_specs;
  if (a.layerwise || a.isolate) {
    auto b = parse_memory_size(a.layerwise_memory);
    if (!b) return report_error(Status(b.status().code(), "--layerwise-memory: " + b.status().message()));
    budget = *b;
    for (const auto& s : *specs) {
      if (s.option("precision") == "fp16")
        return report_error(invalid_argument(
            "--layerwise does not run precision=fp16 backends yet (" + s.to_string() +
            "); compare their outputs without --layerwise, and see the float16 range in the "
            "layerwise report of the float32 run"));
      if (s.name != "reference") layer_specs.push_back(s);
    }
    if (layer_specs.empty())
      return report_error(invalid_argument(
          "--layerwise compares the reference's intermediate tensors with another backend; add "
          "one to --backends (e.g. reference,onnxruntime)"));
  }

  auto model = load_model(a.model);
  if (!model) return report_error(model.status());
  for (const auto& w : model->warnings) std::cerr << "onnxdbg: warning: " << w << "\n";
  const onnx::GraphProto& graph = model->proto.graph();
  Expected<TensorMap> inputs = TensorMap{};
  size_t input_samples = 0;
  if (a.load_inputs.empty()) {
    inputs = generate_inputs(graph, gen);
  } else {
    // Data saved from another model is the usual mistake; say so before any backend runs.
    auto loaded = load_samples(a.load_inputs, graph, DataRole::kInputs);
    if (!loaded) return report_error(loaded.status());
    if (Status st =
            check_samples(loaded->samples, graph, DataRole::kInputs, "'" + a.load_inputs + "'");
        !st)
      return report_error(st);
    input_samples = loaded->samples.size();
    if (a.sample >= input_samples)
      return report_error(invalid_argument("--sample " + std::to_string(a.sample) + ": '" +
                                           a.load_inputs + "' holds " +
                                           std::to_string(input_samples) + " sample(s)"));
    if (input_samples > 1 && !a.json)
      std::cerr << "onnxdbg: note: '" << a.load_inputs << "' holds " << input_samples
                << " samples; running sample " << a.sample << " (--sample K picks another)\n";
    inputs = std::move(loaded->samples[a.sample]);
  }
  if (!inputs) return report_error(inputs.status());
  std::optional<TensorMap> golden;
  if (!a.load_outputs.empty()) {
    auto loaded = load_samples(a.load_outputs, graph, DataRole::kOutputs);
    if (!loaded) return report_error(loaded.status());
    if (Status st =
            check_samples(loaded->samples, graph, DataRole::kOutputs, "'" + a.load_outputs + "'");
        !st)
      return report_error(st);
    const size_t n = loaded->samples.size();
    if (input_samples && n != input_samples)
      return report_error(invalid_argument(
          "'" + a.load_inputs + "' holds " + std::to_string(input_samples) +
          " input sample(s) but '" + a.load_outputs + "' holds " + std::to_string(n) +
          " output sample(s); they must come from the same run"));
    if (!input_samples && n > 1)
      return report_error(invalid_argument("'" + a.load_outputs + "' holds " + std::to_string(n) +
                                           " output samples; give their inputs with --load-inputs "
                                           "so each is compared with its own"));
    if (!loaded->note.empty() && !a.json) std::cerr << "onnxdbg: note: " << loaded->note << "\n";
    golden = std::move(loaded->samples[input_samples ? a.sample : 0]);
    // Only graph outputs are golden values here; inputs and intermediate tensors a merged file
    // may also hold are not compared.
    size_t others = 0;
    std::erase_if(*golden, [&](const auto& kv) {
      for (const auto& sig : model_outputs(graph))
        if (sig.name == kv.first) return false;
      return ++others > 0;
    });
    if (others && !a.json)
      std::cerr << "onnxdbg: note: '" << a.load_outputs << "' also holds " << others
                << " tensor(s) that are not graph outputs; they are not compared\n";
  }
  if (!a.save_inputs.empty()) {
    Status st = save_npz(a.save_inputs, *inputs);
    if (!st) return report_error(st);
  }

  const bool tty = isatty(2) && !a.json;
  CompareRunOptions opt;
  opt.tolerance = tol;
  opt.error_stat = *stat;
  opt.validate = a.validate;
  if (tty) opt.progress = [](const std::string& s) { std::cerr << "\r\x1b[K[onnxdbg] " << s << "..." << std::flush; };
  if (golden) {
    opt.golden_outputs = std::move(golden);
    opt.golden_source = a.load_outputs;
  }
  CompareRunReport rep = run_and_compare(a.model, *specs, *inputs, opt);

  std::optional<LayerwiseReport> layers;
  if (a.layerwise || a.isolate) {
    LayerwiseOptions lo;
    lo.tolerance = tol;
    lo.error_stat = *stat;
    lo.memory_budget = budget;
    lo.isolate = a.isolate;
    lo.reference = *golden_options;
    lo.progress = opt.progress;
    auto lw = run_layerwise(*model, layer_specs, *inputs, lo);
    if (tty) std::cerr << "\r\x1b[K" << std::flush;
    if (!lw) return report_error(lw.status());
    layers = std::move(*lw);
    if (layers->first) {
      const std::string dir = a.save_repro.empty()
                                  ? default_repro_dir(a.model, layers->tensors[layers->first->tensor])
                                  : a.save_repro;
      if (tty) opt.progress("writing the repro folder " + dir);
      Status st = save_layerwise_repro(*model, *inputs, *layers, dir, *golden_options);
      if (!st) std::cerr << "onnxdbg: warning: no repro folder: " << st.message() << "\n";
    }
  }
  if (tty) std::cerr << "\r\x1b[K" << std::flush;
  const std::string provider_problem = a.strict_providers ? strict_provider_error(rep) : "";
  if (!provider_problem.empty()) {
    rep.verdict = Verdict::kError;
    rep.verdict_line = provider_problem;
  }

  if (!a.save_outputs.empty()) {
    // The golden (first) backend's outputs under their own names, the others as BACKEND/NAME.
    TensorMap all;
    bool first = true;
    for (const auto& b : rep.backends) {
      if (!b.ok) continue;
      for (const auto& [name, t] : b.outputs) all[first ? name : b.spec.to_string() + "/" + name] = t;
      first = false;
    }
    if (layers) {
      // With --layerwise, every intermediate tensor too: the reference's values.
      auto values = reference_layer_values(a.model, *inputs, budget, *golden_options);
      if (!values) return report_error(values.status());
      for (auto& [name, t] : *values) all.emplace(name, std::move(t));
    }
    Status st = save_npz(a.save_outputs, all);
    if (!st) return report_error(st);
  }
  bool layers_agree = true;
  if (layers)
    for (const auto& b : layers->backends) layers_agree = layers_agree && b.ok && b.failed == 0;
  if (a.json) {
    nlohmann::json j = report::run_report_json(rep);
    if (layers) report::add_layerwise_json(*layers, j);
    std::cout << j.dump(2) << "\n";
  } else {
    report::print_run_report(rep, std::cout, report::use_color(1));
    if (layers) report::print_layerwise_report(*layers, std::cout, report::use_color(1));
  }
  if (!a.html.path.empty()) {
    auto ov = run_overlays(rep, layers ? &*layers : nullptr);
    if (Status st = write_html_view(a.html, *model, std::move(ov), std::cerr); !st)
      return report_error(st);
  }
  if (!provider_problem.empty()) return report_error(invalid_argument(provider_problem));
  return rep.verdict == Verdict::kAgree && layers_agree ? kExitOk : kExitMismatch;
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<RunArgs>();
  std::string backend_help = "Comma-separated backends, the first gives the golden values. Each is "
                             "NAME[:KEY=VALUE]...; available:";
  for (const auto& d : backend_docs()) {
    backend_help += "\n  " + d.name + ": " + d.help;
    for (const auto& o : d.options) backend_help += "\n      " + o.key + "=" + o.values + "  " + o.help;
  }
  auto* cmd = app.add_subcommand("run", "Run a model on several backends and compare their outputs.");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  backend_help +=
      "\nEvery backend also takes precision=fp16: it runs the model converted to float16 "
      "(inputs and outputs stay float32), and the report lists the nodes whose float32 values "
      "exceed float16's range."
      "\nA comma after providers=... continues the provider list "
      "(reference,onnxruntime:providers=cuda,cpu); '+' works too (providers=cuda+cpu).";
  cmd->add_option("--backends", args->backends, backend_help)->capture_default_str();
  cmd->add_option("--reference-accumulate", args->reference_accumulate,
                  "float|double: precision of the sums in accumulating ops (reductions, Softmax, "
                  "normalisation statistics, MatMul, Gemm, Conv, ...) on every reference backend "
                  "and the golden reference of --layerwise; double is a stricter golden run "
                  "(default float; same as reference:accumulate=double)")
      ->check(CLI::IsMember({"float", "double"}));
  cmd->add_flag("--strict-providers", args->strict_providers,
                "Fail (exit status 2) when a backend does not run on the execution providers it "
                "asked for: one missing from ONNX Runtime, refused, or nodes placed on a provider "
                "not requested (without it these are warnings)");
  cmd->add_option("--seed", args->seed, "Seed for generated inputs")->capture_default_str();
  cmd->add_option("--val-range", args->val_range,
                  "Range of generated values: [LOW,HIGH] for all inputs or NAME:[LOW,HIGH] for one "
                  "(default [0,1])");
  cmd->add_option("--input-shapes", args->input_shapes,
                  "Shapes for inputs with dynamic dimensions: NAME:1x3x224x224 or NAME:[1,3,224,224]");
  cmd->add_option("--atol", args->atol, "Absolute tolerance: VALUE or OUTPUT:VALUE (default 1e-5)");
  cmd->add_option("--rtol", args->rtol, "Relative tolerance: VALUE or OUTPUT:VALUE (default 1e-5)");
  cmd->add_option("--check-error-stat", args->error_stat,
                  "Statistic compared with the tolerances: elemwise (every element, "
                  "|a-e| <= atol + rtol*|e|), max, mean or median")
      ->capture_default_str();
  cmd->add_option("--load-inputs", args->load_inputs,
                  "Read inputs instead of generating them: a .npz file, a Polygraphy JSON input "
                  "file (--save-inputs, data to-input), an ONNX test-data folder (input_K.pb, or "
                  "test_data_set_N folders: one sample each), or a .pb/.npy file for a "
                  "single-input model");
  cmd->add_option("--load-outputs", args->load_outputs,
                  "Golden outputs to compare every backend against instead of the first "
                  "backend's: .npz (e.g. from --save-outputs), Polygraphy JSON RunResults (first "
                  "runner) or input list, ONNX test-data folder (output_K.pb), or .pb/.npy");
  cmd->add_option("--sample", args->sample,
                  "Which sample of multi-sample --load-inputs/--load-outputs data to run "
                  "(0-based; default 0)");
  cmd->add_option("--save-inputs", args->save_inputs, "Write the inputs used to a .npz file");
  cmd->add_option("--save-outputs", args->save_outputs,
                  "Write every backend's outputs to a .npz file: the first backend's under their "
                  "own names (golden values), the others as BACKEND/NAME; with --layerwise also "
                  "the reference's value of every intermediate tensor (within "
                  "--layerwise-memory)");
  cmd->add_flag("--validate", args->validate, "Also fail when any output holds NaN or Inf");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of tables");
  cmd->add_flag("--layerwise", args->layerwise,
                "Also compare every intermediate tensor of the main graph with the reference's "
                "(onnxruntime: as extra graph outputs, in batches; opencv: by layer name)");
  cmd->add_option("--layerwise-memory", args->layerwise_memory,
                  "Memory for intermediate tensors held at once (e.g. 512MiB, 2GiB); larger "
                  "models are compared in more batches")
      ->capture_default_str();
  cmd->add_flag("--isolate", args->isolate,
                "With --layerwise (implied): re-run each divergent node alone on golden inputs, "
                "to tell its own error from inherited error");
  cmd->add_option("--save-repro", args->save_repro,
                  "Folder for the first divergent node as an ONNX test case (model.onnx + "
                  "test_data_set_0); default ./onnxdbg-repro/<model>_<node>");
  add_html_option(cmd, args->html,
                  "each node coloured by its error (with --layerwise: every node's own error), "
                  "the first divergent node centred");
  cmd->footer(
      "Exit status: 0 when all backends agree, 1 when they disagree or a backend fails, 2 on a "
      "usage or model error, or with --strict-providers when a provider was missing or replaced.");
  cmd->callback([args, &ctx] { ctx.exit_code = run_command(*args); });
}

}  // namespace onnxdbg::cli
