// The CLI's shared option groups (options.h): one declaration of each option, its help and its
// parsing, for every command that takes it.
#include "cli/options.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "core/run_limits.h"

namespace onnxdbg::cli {

void InputArgs::add_to(CLI::App* cmd, const Config& config) {
  cmd->add_option("--seed", seed_, "Seed for generated inputs")->capture_default_str();
  iterations_option_ =
      cmd->add_option("--iterations", iterations_, config.iterations_help)->capture_default_str();
  cmd->add_option("--val-range", val_range_,
                  "Range of generated values: [LOW,HIGH] for all inputs or NAME:[LOW,HIGH] for one "
                  "(default [0,1])");
  if (config.input_shapes)
    cmd->add_option(
        "--input-shapes", input_shapes_,
        "Shapes for inputs with dynamic dimensions: NAME:1x3x224x224 or NAME:[1,3,224,224], "
        "several separated by spaces or commas");
  cmd->add_option("--load-inputs", load_inputs_, config.load_inputs_help);
  if (config.sample)
    sample_option_ = cmd->add_option("--sample", sample_,
                                     "Run only sample K (0-based) of the samples --load-inputs "
                                     "holds or --iterations generates (default: all of them)");
}

bool InputArgs::iterations_given() const {
  return iterations_option_ && iterations_option_->count() > 0;
}

Expected<InputGenOptions> InputArgs::generate() const {
  InputGenOptions gen;
  gen.seed = seed_;
  if (Status st = parse_input_shapes(input_shapes_, gen.shapes); !st) return st;
  if (Status st = parse_value_ranges(val_range_, gen); !st) return st;
  return gen;
}

Expected<api::InputOptions> InputArgs::to_options() const {
  api::InputOptions in;
  ODB_ASSIGN_OR_RETURN(in.generate, generate());
  if (iterations_given()) in.iterations = iterations_;
  in.load_inputs = load_inputs_;
  if (sample_option_ && sample_option_->count() > 0) in.sample = sample_;
  return in;
}

void ComparisonArgs::add_to(CLI::App* cmd, const Config& config) {
  cmd->add_option(
      "--atol", atol_,
      "Absolute tolerance: VALUE or OUTPUT:VALUE (default 1e-5)" + config.tolerance_help_suffix);
  cmd->add_option(
      "--rtol", rtol_,
      "Relative tolerance: VALUE or OUTPUT:VALUE (default 1e-5)" + config.tolerance_help_suffix);
  cmd->add_option("--check-error-stat", error_stat_,
                  "Statistic compared with the tolerances: elemwise (every element, "
                  "|a-e| <= atol + rtol*|e|), max, mean or median")
      ->capture_default_str();
  if (config.load_outputs)
    cmd->add_option("--load-outputs", load_outputs_,
                    "Golden outputs to compare every backend against instead of the first "
                    "backend's: .npz (e.g. from --save-outputs), Polygraphy JSON RunResults (first "
                    "runner) or input list, ONNX test-data folder (output_K.pb), or .pb/.npy. "
                    "With several input samples it must hold as many: sample i is compared with "
                    "its golden sample i. With --layerwise, the intermediate tensors it holds "
                    "(by ONNX tensor name) are the golden values of the layerwise comparison, "
                    "and every backend listed, the reference too, is compared with them");
  if (config.validate)
    cmd->add_flag("--validate", validate_, "Also fail when any output holds NaN or Inf");
}

Expected<api::ComparisonOptions> ComparisonArgs::to_options() const {
  api::ComparisonOptions c;
  if (Status st = parse_tolerance_args(atol_, rtol_, c.tolerance); !st) return st;
  ODB_ASSIGN_OR_RETURN(c.error_stat, error_stat_from_name(error_stat_));
  c.validate = validate_;
  c.load_outputs = load_outputs_;
  return c;
}

void BackendArgs::add_to(CLI::App* cmd, const std::string& role) {
  std::string help = role + ". Each is NAME[:KEY=VALUE]...; available:";
  for (const auto& d : backend_docs()) {
    help += "\n  " + d.name + ": " + d.help;
    for (const auto& o : d.options) help += "\n      " + o.key + "=" + o.values + "  " + o.help;
  }
  help +=
      "\nEvery backend also takes precision=fp16: it runs the model converted to float16 "
      "(inputs and outputs stay float32), and the report lists the nodes whose float32 values "
      "exceed float16's range; with --layerwise, its float16 intermediate tensors are compared "
      "with the float32 golden values (reference:precision=fp16 is the interpreter's own "
      "float16 run)."
      "\nA comma after providers=... continues the provider list "
      "(reference,onnxruntime:providers=cuda,cpu); '+' works too (providers=cuda+cpu).";
  cmd->add_option("--backends", list_, help)->capture_default_str();
}

void LimitArgs::add_to(CLI::App* cmd, const std::string& timeout_help) {
  cmd->add_option("--timeout", timeout_, timeout_help);
  cmd->add_option("--max-memory", max_memory_,
                  "Memory one tensor may take (e.g. 4GB, 512MiB): a generated input, an "
                  "initializer or an intermediate tensor of the reference that needs more is "
                  "refused before it is allocated, in one sentence naming it (default 80% of the "
                  "memory available, or less where `ulimit -v` or the cgroup's memory limit "
                  "leaves less; sets reference:max_memory=)");
  cmd->add_option("--max-iterations", max_iterations_,
                  "Iterations one Loop or Scan node of the reference may run: one that reaches N "
                  "fails the run, naming the node (default: no bound; a run past 10 s says on a "
                  "terminal which node and iteration it is at; sets reference:max_iterations=)")
      ->check(CLI::PositiveNumber);
}

Expected<double> LimitArgs::timeout_seconds() const {
  if (timeout_ < 0 || !std::isfinite(timeout_))
    return invalid_argument("--timeout must be a positive number of seconds");
  return timeout_;
}

Expected<uint64_t> LimitArgs::max_memory() const {
  if (max_memory_.empty()) return uint64_t{0};
  auto b = parse_memory_size(max_memory_);
  if (!b) return Status(b.status().code(), "--max-memory: " + b.status().message());
  return *b;
}

std::vector<std::string> split_list(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    std::string cur;
    int depth = 0;
    for (char c : v) {
      if (c == '[') ++depth;
      if (c == ']') --depth;
      if (c == ',' && depth == 0) {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) out.push_back(cur);
  }
  return out;
}

namespace {
// The --json flags of every command (one process runs one command) and whether the command's
// object went out; report_error reads both.
std::vector<const bool*>& json_flags() {
  static std::vector<const bool*> flags;
  return flags;
}
bool g_json_printed = false;
}  // namespace

void add_json_flag(CLI::App* cmd, bool& json, const std::string& help) {
  json_flags().push_back(&json);
  cmd->add_flag("--json", json, help);
}

bool json_requested() {
  return std::any_of(json_flags().begin(), json_flags().end(), [](const bool* f) { return *f; });
}

void print_json(const nlohmann::json& j) {
  std::cout << api::json_text(j) << "\n";
  std::cout.flush();
  g_json_printed = true;
}

bool json_printed() { return g_json_printed; }

}  // namespace onnxdbg::cli
