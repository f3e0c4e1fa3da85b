// `onnxdbg run`: run a model on several backends with generated or loaded inputs, compare every
// output with the first backend's, print tables and a verdict (or one JSON object with --json).
// Several input samples (--iterations N, or a multi-sample --load-inputs file) run on the same
// sessions and are reported one by one, never merged.
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <iostream>
#include <optional>

#include "backends/backend.h"
#include "backends/reference/reference_backend.h"
#include "cli/commands.h"
#include "cli/html_output.h"
#include "data/npz.h"
#include "data/samples.h"
#include "layerwise/layer_values.h"
#include "layerwise/layerwise.h"
#include "model/model.h"
#include "reference/interpreter.h"
#include "report/layerwise_report.h"
#include "report/run_report.h"
#include "report/table.h"
#include "runner/compare_run.h"
#include "runner/input_gen.h"

namespace onnxdbg::cli {

namespace {

struct RunArgs {
  std::string model;
  std::string backends = "reference,onnxruntime";
  uint64_t seed = 1;
  int iterations = 1;
  bool iterations_given = false;
  std::vector<std::string> val_range;
  std::vector<std::string> input_shapes;
  std::vector<std::string> atol;
  std::vector<std::string> rtol;
  std::string error_stat = "elemwise";
  std::string load_inputs;
  std::string load_outputs;
  size_t sample = 0;
  bool sample_given = false;
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

/// Whether `path` names a Polygraphy JSON file (several samples fit only there).
bool is_json_path(const std::string& path) {
  return std::filesystem::path(path).extension() == ".json";
}

/// Writes one map per sample to `path`: .json (Polygraphy's input-list format) for any count,
/// else one .npz (the only choice before several samples existed, whatever the extension).
Status write_samples(const std::string& path, const std::vector<TensorMap>& samples) {
  if (samples.size() == 1 && !is_json_path(path)) return save_npz(path, samples.front());
  return save_samples(path, samples);
}

/// The layerwise pass of one sample: its report, or why it could not run.
struct SampleLayers {
  std::optional<LayerwiseReport> report;
  std::string error;
  bool agree() const {
    if (!report) return error.empty();
    for (const auto& b : report->backends)
      if (!b.ok || b.failed != 0) return false;
    return true;
  }
};

int run_command(const RunArgs& a) {
  if (a.iterations < 1)
    return report_error(invalid_argument("--iterations must be at least 1 (it is " +
                                         std::to_string(a.iterations) + ")"));
  if (a.iterations_given && !a.load_inputs.empty())
    return report_error(invalid_argument(
        "--iterations generates input samples, but '" + a.load_inputs +
        "' (--load-inputs) already decides them: every sample it holds runs, and --sample K "
        "picks one; drop --iterations"));
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
    if (!b)
      return report_error(Status(b.status().code(), "--layerwise-memory: " + b.status().message()));
    budget = *b;
    // Every backend but the float32 references is compared with the golden reference run;
    // reference:precision=fp16 is, as the interpreter's own float16 run.
    for (const auto& s : *specs)
      if (s.name != "reference" || s.option("precision") == "fp16") layer_specs.push_back(s);
    if (layer_specs.empty())
      return report_error(invalid_argument(
          "--layerwise compares the reference's intermediate tensors with another backend; add "
          "one to --backends (e.g. reference,onnxruntime)"));
  }

  auto model = load_model(a.model);
  if (!model) return report_error(model.status());
  for (const auto& w : model->warnings) std::cerr << "onnxdbg: warning: " << w << "\n";
  const onnx::GraphProto& graph = model->proto.graph();

  // The input samples: generated (sample i from seed + i, as `reduce --iterations`) or loaded;
  // --sample K keeps sample K alone. `ids` are their numbers in the full set.
  std::vector<TensorMap> samples;
  std::vector<size_t> ids;
  size_t total = 0;
  if (a.load_inputs.empty()) {
    total = static_cast<size_t>(a.iterations);
    if (a.sample_given && a.sample >= total)
      return report_error(invalid_argument("--sample " + std::to_string(a.sample) +
                                           ": the generated inputs are " + std::to_string(total) +
                                           " sample(s), 0 to " + std::to_string(total - 1) +
                                           " (--iterations N generates N)"));
    for (size_t i = 0; i < total; ++i) {
      if (a.sample_given && i != a.sample) continue;
      gen.seed = a.seed + i;
      auto t = generate_inputs(graph, gen);
      if (!t) return report_error(t.status());
      samples.push_back(std::move(*t));
      ids.push_back(i);
    }
  } else {
    // Data saved from another model is the usual mistake; say so before any backend runs.
    auto loaded = load_samples(a.load_inputs, graph, DataRole::kInputs);
    if (!loaded) return report_error(loaded.status());
    if (Status st =
            check_samples(loaded->samples, graph, DataRole::kInputs, "'" + a.load_inputs + "'");
        !st)
      return report_error(st);
    total = loaded->samples.size();
    if (a.sample >= total)
      return report_error(invalid_argument("--sample " + std::to_string(a.sample) + ": '" +
                                           a.load_inputs + "' holds " + std::to_string(total) +
                                           " sample(s)"));
    for (size_t i = 0; i < total; ++i) {
      if (a.sample_given && i != a.sample) continue;
      samples.push_back(std::move(loaded->samples[i]));
      ids.push_back(i);
    }
  }
  if (a.sample_given && total > 1 && !a.json)
    std::cerr << "onnxdbg: note: "
              << (a.load_inputs.empty() ? "--iterations" : "'" + a.load_inputs + "'")
              << (a.load_inputs.empty() ? " gives " : " holds ") << total
              << " samples; running sample " << a.sample
              << " (--sample K picks another; without it all run)\n";
  const size_t n = samples.size();

  std::vector<TensorMap> goldens;
  if (!a.load_outputs.empty()) {
    auto loaded = load_samples(a.load_outputs, graph, DataRole::kOutputs);
    if (!loaded) return report_error(loaded.status());
    if (Status st =
            check_samples(loaded->samples, graph, DataRole::kOutputs, "'" + a.load_outputs + "'");
        !st)
      return report_error(st);
    const size_t count = loaded->samples.size();
    if (!a.load_inputs.empty() && count != total)
      return report_error(invalid_argument("'" + a.load_inputs + "' holds " +
                                           std::to_string(total) + " input sample(s) but '" +
                                           a.load_outputs + "' holds " + std::to_string(count) +
                                           " output sample(s); they must come from the same run"));
    if (a.load_inputs.empty() && count != total && total == 1)
      return report_error(invalid_argument("'" + a.load_outputs + "' holds " +
                                           std::to_string(count) +
                                           " output samples; give their inputs with --load-inputs "
                                           "so each is compared with its own"));
    if (a.load_inputs.empty() && count != total)
      return report_error(invalid_argument("--iterations " + std::to_string(total) + " generates " +
                                           std::to_string(total) + " input samples but '" +
                                           a.load_outputs + "' holds " + std::to_string(count) +
                                           " output sample(s); they must come from the same run"));
    if (!loaded->note.empty() && !a.json) std::cerr << "onnxdbg: note: " << loaded->note << "\n";
    // Only graph outputs are golden values here; inputs and intermediate tensors a merged file
    // may also hold are not compared.
    size_t others = 0;
    for (size_t id : ids) {
      TensorMap g = std::move(loaded->samples[id]);
      size_t dropped = std::erase_if(g, [&](const auto& kv) {
        for (const auto& sig : model_outputs(graph))
          if (sig.name == kv.first) return false;
        return true;
      });
      if (goldens.empty()) others = dropped;
      goldens.push_back(std::move(g));
    }
    if (others && !a.json)
      std::cerr << "onnxdbg: note: '" << a.load_outputs << "' also holds " << others
                << " tensor(s) that are not graph outputs; they are not compared\n";
  }
  // Several samples fit only a .json file; say so before anything runs or is written.
  for (const auto& [flag, path] :
       {std::pair{"--save-inputs", &a.save_inputs}, std::pair{"--save-outputs", &a.save_outputs}})
    if (n > 1 && !path->empty() && !is_json_path(*path))
      return report_error(invalid_argument(
          std::string(flag) + " '" + *path + "': " + std::to_string(n) +
          " samples do not fit one .npz file; give a .json path (Polygraphy's format, one entry "
          "per sample, which --load-inputs/--load-outputs read back)"));
  if (!a.save_inputs.empty()) {
    Status st = write_samples(a.save_inputs, samples);
    if (!st) return report_error(st);
  }

  // float16 rounds every value to 11 significant bits: tolerances meant for float32 put nearly
  // every tensor of a float16 backend outside tolerance, which hides where it really goes wrong.
  if (!a.json && tol.default_tol.rtol < kFloat16RelativeRounding)
    for (const auto& s : *specs)
      if (s.option("precision") == "fp16") {
        std::cerr << "onnxdbg: note: " << s.to_string()
                  << " rounds every value to float16 (relative error up to 4.9e-4), beyond --rtol "
                  << tol.default_tol.rtol
                  << "; float16 runs are usually compared with --atol 1e-3 --rtol 1e-2\n";
        break;
      }
  const bool tty = isatty(2) && !a.json;
  CompareRunOptions opt;
  opt.tolerance = tol;
  opt.error_stat = *stat;
  opt.validate = a.validate;
  if (tty)
    opt.progress = [](const std::string& s) {
      std::cerr << "\r\x1b[K[onnxdbg] " << s << "..." << std::flush;
    };
  if (!goldens.empty()) {
    opt.golden_outputs = std::move(goldens);
    opt.golden_source = a.load_outputs;
  }
  SamplesRunReport rep = run_and_compare_samples(a.model, *specs, samples, opt);

  // The layerwise pass, sample by sample (each loads its own sessions).
  std::vector<SampleLayers> layers(a.layerwise || a.isolate ? n : 0);
  std::optional<size_t> repro_sample;
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerwiseOptions lo;
    lo.tolerance = tol;
    lo.error_stat = *stat;
    lo.memory_budget = budget;
    lo.isolate = a.isolate;
    lo.reference = *golden_options;
    if (opt.progress)
      lo.progress = [&, i](const std::string& s) {
        opt.progress(n > 1 ? "sample " + std::to_string(i) + ": " + s : s);
      };
    auto lw = run_layerwise(*model, layer_specs, samples[i], lo);
    if (!lw) {
      // The first sample's error (a budget too small, say) is everyone's: a usage error. A later
      // sample's is that sample's result.
      if (tty) std::cerr << "\r\x1b[K" << std::flush;
      if (i == 0)
        return report_error(n > 1 ? Status(lw.status().code(), "sample 0: " + lw.status().message())
                                  : lw.status());
      layers[i].error = lw.status().to_string();
      continue;
    }
    layers[i].report = std::move(*lw);
    LayerwiseReport& lr = *layers[i].report;
    if (lr.first && !repro_sample) {
      // The repro folder holds the first sample that has a first divergent node.
      repro_sample = i;
      const std::string dir = a.save_repro.empty()
                                  ? default_repro_dir(a.model, lr.tensors[lr.first->tensor])
                                  : a.save_repro;
      if (tty) opt.progress("writing the repro folder " + dir);
      Status st = save_layerwise_repro(*model, samples[i], lr, dir, *golden_options);
      if (!st) std::cerr << "onnxdbg: warning: no repro folder: " << st.message() << "\n";
    }
  }
  if (tty) std::cerr << "\r\x1b[K" << std::flush;
  std::string provider_problem;
  if (a.strict_providers)
    for (const auto& s : rep.samples)
      if (provider_problem.empty()) provider_problem = strict_provider_error(s);
  if (!provider_problem.empty()) {
    if (n == 1) {
      rep.samples.front().verdict = Verdict::kError;
      rep.samples.front().verdict_line = provider_problem;
    }
    rep.verdict = Verdict::kError;
    rep.verdict_line = provider_problem;
  }

  if (!a.save_outputs.empty()) {
    // Per sample: the golden (first) backend's outputs under their own names, the others as
    // BACKEND/NAME; all computed before anything is written.
    std::vector<TensorMap> all(n);
    for (size_t i = 0; i < n; ++i) {
      bool first = true;
      for (const auto& b : rep.samples[i].backends) {
        if (!b.ok) continue;
        for (const auto& [name, t] : b.outputs)
          all[i][first ? name : b.spec.to_string() + "/" + name] = t;
        first = false;
      }
      if (!layers.empty()) {
        // With --layerwise, every intermediate tensor too: the reference's values.
        auto values = reference_layer_values(a.model, samples[i], budget, *golden_options);
        if (!values) return report_error(values.status());
        for (auto& [name, t] : *values) all[i].emplace(name, std::move(t));
      }
    }
    Status st = write_samples(a.save_outputs, all);
    if (!st) return report_error(st);
  }
  bool layers_agree = true;
  for (const auto& l : layers) layers_agree = layers_agree && l.agree();
  if (a.json) {
    nlohmann::json j = report::run_samples_json(rep);
    if (n == 1 && !layers.empty()) report::add_layerwise_json(*layers.front().report, j);
    if (n > 1) {
      if (!layers.empty()) j["first_divergent_node"] = nullptr;
      for (size_t i = 0; i < n; ++i) {
        nlohmann::json& js = j["samples"][i];
        js["seed"] =
            a.load_inputs.empty() ? nlohmann::json(a.seed + ids[i]) : nlohmann::json(nullptr);
        if (layers.empty()) continue;
        if (layers[i].report) {
          report::add_layerwise_json(*layers[i].report, js);
        } else {
          js["layerwise_error"] = layers[i].error;
          js["first_divergent_node"] = nullptr;
        }
        if (js["first_divergent_node"].is_object() && j["first_divergent_node"].is_null()) {
          j["first_divergent_node"] = js["first_divergent_node"];
          j["first_divergent_node"]["sample"] = i;
        }
      }
    }
    std::cout << j.dump(2) << "\n";
  } else if (n == 1) {
    report::print_run_report(rep.samples.front(), std::cout, report::use_color(1));
    if (!layers.empty())
      report::print_layerwise_report(*layers.front().report, std::cout, report::use_color(1));
  } else {
    const bool color = report::use_color(1);
    std::cout << "model: " << a.model << "\n";
    std::cout << "samples: " << n << ", "
              << (a.load_inputs.empty() ? "generated with seeds " + std::to_string(a.seed) +
                                              " to " + std::to_string(a.seed + n - 1) +
                                              " (--iterations " + std::to_string(n) + ")"
                                        : "from '" + a.load_inputs + "'")
              << "; each compared on its own\n";
    for (size_t i = 0; i < n; ++i) {
      std::string heading = "=== sample " + std::to_string(i) + " of " + std::to_string(n);
      if (a.load_inputs.empty()) heading += " (seed " + std::to_string(a.seed + i) + ")";
      std::cout << "\n" << report::colorize(heading + " ===", "bold", color) << "\n";
      report::print_run_tables(rep.samples[i], std::cout, color);
      report::print_verdict(rep.samples[i].verdict, rep.samples[i].verdict_line, std::cout, color,
                            "sample " + std::to_string(i) + ": ");
      if (layers.empty()) continue;
      if (layers[i].report)
        report::print_layerwise_report(*layers[i].report, std::cout, color);
      else
        std::cout << "\nlayerwise: could not run on sample " << i << ": " << layers[i].error
                  << "\n";
    }
    std::cout << "\n"
              << report::colorize("=== all " + std::to_string(n) + " samples ===", "bold", color)
              << "\n";
    if (repro_sample)
      std::cout << "first divergent node: on sample " << *repro_sample
                << " (repro: " << layers[*repro_sample].report->repro_dir.string() << ")\n";
    report::print_verdict(rep.verdict, rep.verdict_line, std::cout, color);
  }
  if (!a.html.path.empty()) {
    // One sample's page: the first that disagrees (its outputs or its layers), else sample 0.
    auto disagrees = [&](size_t i) {
      return rep.samples[i].verdict != Verdict::kAgree || (!layers.empty() && !layers[i].agree());
    };
    size_t shown = 0;
    while (shown + 1 < n && !disagrees(shown)) ++shown;
    if (!disagrees(shown)) shown = 0;
    const LayerwiseReport* lr =
        !layers.empty() && layers[shown].report ? &*layers[shown].report : nullptr;
    auto ov = run_overlays(rep.samples[shown], lr);
    if (n > 1)
      std::cerr << "onnxdbg: note: the HTML page shows sample " << shown << " of " << n
                << (disagrees(shown) ? " (the first that disagrees)" : " (all samples agree)")
                << "\n";
    if (Status st = write_html_view(a.html, *model, std::move(ov), std::cerr); !st)
      return report_error(st);
  }
  if (!provider_problem.empty()) return report_error(invalid_argument(provider_problem));
  return rep.verdict == Verdict::kAgree && layers_agree ? kExitOk : kExitMismatch;
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<RunArgs>();
  std::string backend_help =
      "Comma-separated backends, the first gives the golden values. Each is "
      "NAME[:KEY=VALUE]...; available:";
  for (const auto& d : backend_docs()) {
    backend_help += "\n  " + d.name + ": " + d.help;
    for (const auto& o : d.options)
      backend_help += "\n      " + o.key + "=" + o.values + "  " + o.help;
  }
  auto* cmd =
      app.add_subcommand("run", "Run a model on several backends and compare their outputs.");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  backend_help +=
      "\nEvery backend also takes precision=fp16: it runs the model converted to float16 "
      "(inputs and outputs stay float32), and the report lists the nodes whose float32 values "
      "exceed float16's range; with --layerwise, its float16 intermediate tensors are compared "
      "with the float32 golden values (reference:precision=fp16 is the interpreter's own "
      "float16 run)."
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
  auto* iterations =
      cmd->add_option("--iterations", args->iterations,
                      "Number of generated input samples (sample i from seed --seed + i, so "
                      "sample 0 is the single sample's input); each backend loads the model once "
                      "and runs every sample, and each sample is compared and reported on its own "
                      "(exit status 0 only when every sample agrees). Not with --load-inputs, "
                      "whose file decides the samples")
          ->capture_default_str();
  cmd->add_option("--val-range", args->val_range,
                  "Range of generated values: [LOW,HIGH] for all inputs or NAME:[LOW,HIGH] for one "
                  "(default [0,1])");
  cmd->add_option(
      "--input-shapes", args->input_shapes,
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
                  "single-input model. Every sample it holds runs, each compared on its own "
                  "(--sample K runs one)");
  cmd->add_option("--load-outputs", args->load_outputs,
                  "Golden outputs to compare every backend against instead of the first "
                  "backend's: .npz (e.g. from --save-outputs), Polygraphy JSON RunResults (first "
                  "runner) or input list, ONNX test-data folder (output_K.pb), or .pb/.npy. "
                  "With several input samples it must hold as many: sample i is compared with "
                  "its golden sample i");
  auto* sample =
      cmd->add_option("--sample", args->sample,
                      "Run only sample K (0-based) of the samples --load-inputs holds or "
                      "--iterations generates (default: all of them)");
  cmd->add_option("--save-inputs", args->save_inputs,
                  "Write the inputs used to a .npz file, or a .json file (Polygraphy's input "
                  "list: one entry per sample; required for several samples)");
  cmd->add_option("--save-outputs", args->save_outputs,
                  "Write every backend's outputs to a .npz file, or a .json file (one entry per "
                  "sample; required for several samples): the first backend's under their own "
                  "names (golden values), the others as BACKEND/NAME; with --layerwise also the "
                  "reference's value of every intermediate tensor (within --layerwise-memory). "
                  "--load-outputs reads it back");
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
                  "the first divergent node centred; with several samples, those of the first "
                  "sample that disagrees (sample 0 when all agree)");
  cmd->footer(
      "Exit status: 0 when all backends agree (on every sample), 1 when they disagree or a "
      "backend fails (on any sample), 2 on a usage or model error, or with --strict-providers "
      "when a provider was missing or replaced.");
  cmd->callback([args, iterations, sample, &ctx] {
    args->iterations_given = iterations->count() > 0;
    args->sample_given = sample->count() > 0;
    ctx.exit_code = run_command(*args);
  });
}

}  // namespace onnxdbg::cli
