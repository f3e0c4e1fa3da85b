// The CLI's shared option groups (options.h): one declaration of each option, its help and its
// parsing, for every command that takes it.
#include "cli/options.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "core/run_limits.h"

namespace onnxdbg::cli {

std::string flag_of(std::string_view id) { return std::string(option_spec(id).cli); }
std::string help_of(std::string_view id) { return std::string(option_spec(id).help); }

void InputArgs::add_to(CLI::App* cmd, const Config& config) {
  cmd->add_option(flag_of("seed"), seed_, help_of("seed"))->capture_default_str();
  iterations_option_ = cmd->add_option(flag_of("iterations"), iterations_, config.iterations_help)
                           ->capture_default_str();
  cmd->add_option(flag_of("val_range"), val_range_, help_of("val_range"));
  if (config.input_shapes)
    cmd->add_option(flag_of("input_shapes"), input_shapes_, help_of("input_shapes"));
  cmd->add_option(flag_of("load_inputs"), load_inputs_, config.load_inputs_help);
  if (config.sample)
    sample_option_ = cmd->add_option(flag_of("sample"), sample_, help_of("sample"));
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
  cmd->add_option(flag_of("atol"), atol_, help_of("atol") + config.tolerance_help_suffix);
  cmd->add_option(flag_of("rtol"), rtol_, help_of("rtol") + config.tolerance_help_suffix);
  cmd->add_option(flag_of("error_stat"), error_stat_, help_of("error_stat"))->capture_default_str();
  if (config.load_outputs) {
    cmd->add_option(flag_of("load_outputs"), load_outputs_, help_of("load_outputs"));
    cmd->add_option(flag_of("golden_names"), golden_names_, help_of("golden_names"))
        ->capture_default_str();
    cmd->add_option(flag_of("golden_layout"), golden_layout_, help_of("golden_layout"))
        ->capture_default_str();
  }
  if (config.validate) cmd->add_flag(flag_of("validate"), validate_, help_of("validate"));
}

Expected<api::ComparisonOptions> ComparisonArgs::to_options() const {
  api::ComparisonOptions c;
  if (Status st = parse_tolerance_args(atol_, rtol_, c.tolerance); !st) return st;
  ODB_ASSIGN_OR_RETURN(c.error_stat, error_stat_from_name(error_stat_));
  c.validate = validate_;
  c.load_outputs = load_outputs_;
  ODB_ASSIGN_OR_RETURN(c.golden_names,
                       golden_names_from_name(golden_names_, flag_of("golden_names")));
  ODB_ASSIGN_OR_RETURN(c.golden_layout,
                       golden_layout_from_name(golden_layout_, flag_of("golden_layout")));
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
  cmd->add_option(flag_of("backends"), list_, help)->capture_default_str();
}

void LimitArgs::add_to(CLI::App* cmd, const std::string& timeout_help) {
  cmd->add_option(flag_of("timeout"), timeout_, timeout_help);
  cmd->add_option(flag_of("max_memory"), max_memory_, help_of("max_memory"));
  cmd->add_option(flag_of("max_iterations"), max_iterations_, help_of("max_iterations"))
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
