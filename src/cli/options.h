// The CLI's option groups, declared once and shared by every command that takes them (as
// Polygraphy's argument groups): inputs (--input-shapes --val-range --seed --iterations
// --load-inputs --sample), comparison (--atol --rtol --check-error-stat --validate
// --load-outputs --golden-names --golden-layout), backends (--backends) and limits (--timeout
// --max-memory). Each group adds its options to a command and turns what was parsed into the public
// API's options (include/onnxdbg/run.h).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "onnxdbg/options.h"
#include "onnxdbg/run.h"

namespace onnxdbg::cli {

/// --input-shapes --val-range --seed --iterations --load-inputs --sample.
class InputArgs {
 public:
  /// Which options a command takes beside --seed, --val-range and --load-inputs, and the help of
  /// the ones whose meaning differs.
  struct Config {
    bool input_shapes = true;  ///< --input-shapes (reduce has --model-input-shapes instead)
    bool sample = true;        ///< --sample K
    std::string iterations_help;
    std::string load_inputs_help;
  };
  /// Adds the group's options to `cmd`.
  void add_to(CLI::App* cmd, const Config& config);
  /// The generated inputs' options (seed, --val-range, --input-shapes). Errors: kInvalidArgument
  /// naming a malformed --input-shapes or --val-range entry.
  Expected<InputGenOptions> generate() const;
  /// The whole group as the API's input options. Errors: as generate().
  Expected<api::InputOptions> to_options() const;
  /// Whether --iterations was given, and its value (1 when not).
  bool iterations_given() const;
  int iterations() const { return iterations_; }
  uint64_t seed() const { return seed_; }
  const std::string& load_inputs() const { return load_inputs_; }

 private:
  std::vector<std::string> input_shapes_, val_range_;
  uint64_t seed_ = option_defaults::seed;
  int iterations_ = option_defaults::iterations;
  std::string load_inputs_;
  size_t sample_ = 0;
  CLI::Option* iterations_option_ = nullptr;
  CLI::Option* sample_option_ = nullptr;
};

/// --atol --rtol --check-error-stat, and for run --validate --load-outputs --golden-names
/// --golden-layout.
class ComparisonArgs {
 public:
  struct Config {
    bool validate = true;               ///< --validate
    bool load_outputs = true;           ///< --load-outputs, --golden-names, --golden-layout
    std::string tolerance_help_suffix;  ///< appended to --atol/--rtol's help ("for --fail-on ...")
  };
  void add_to(CLI::App* cmd, const Config& config);
  /// Errors: kInvalidArgument for a malformed tolerance, an unknown statistic, or a
  /// --golden-names/--golden-layout value that is none of the choices (listing them).
  Expected<api::ComparisonOptions> to_options() const;

 private:
  std::vector<std::string> atol_, rtol_;
  std::string error_stat_{option_defaults::error_stat};
  bool validate_ = false;
  std::string load_outputs_;
  std::string golden_names_{option_defaults::golden_names};
  std::string golden_layout_{option_defaults::golden_layout};
};

/// --backends NAME[:KEY=VALUE],..., with every backend's options in its help.
class BackendArgs {
 public:
  /// `role` starts the help ("Comma-separated backends, the first gives the golden values").
  void add_to(CLI::App* cmd, const std::string& role);
  /// Errors: those of parse_backend_list (an unknown backend or option, named).
  Expected<std::vector<BackendSpec>> to_specs() const { return parse_backend_list(list_); }

 private:
  std::string list_{option_defaults::backends};
};

/// --timeout SECONDS, --max-memory SIZE and --max-iterations N (run, reduce): what keeps a hostile
/// model from hanging onnxdbg or exhausting its memory (api::RunOptions::timeout_seconds,
/// max_memory, max_iterations).
class LimitArgs {
 public:
  /// `timeout_help` says what the timeout covers in this command.
  void add_to(CLI::App* cmd, const std::string& timeout_help);
  /// Seconds (0: not given). Errors: kInvalidArgument for a negative value.
  Expected<double> timeout_seconds() const;
  /// Bytes (0: not given, the default share of the memory available). Errors: kInvalidArgument
  /// for a malformed size, named.
  Expected<uint64_t> max_memory() const;
  /// Iterations one Loop/Scan may run (0: not given, no bound).
  uint64_t max_iterations() const { return max_iterations_; }

 private:
  double timeout_ = 0;
  std::string max_memory_;
  uint64_t max_iterations_ = 0;
};

/// The flag of options.def's option `id` ("--seed"), for CLI::App::add_option and add_flag.
std::string flag_of(std::string_view id);
/// The help of options.def's option `id`: the one text a flag shared by several commands has.
std::string help_of(std::string_view id);

/// The items of comma-separated list options, repeated options joined: "a,b" "c" -> a, b, c.
/// Commas inside brackets do not split ("x:[1,2]:float32,y" -> "x:[1,2]:float32", "y"); empty
/// items are dropped.
std::vector<std::string> split_list(const std::vector<std::string>& values);

/// Adds `--json` to `cmd` with `help` (default: "Print one JSON object instead of tables").
/// A command that fails after `--json` was given prints {"error": {"code", "message"}} on
/// stdout (report_error), so that a program reading stdout always gets one JSON object.
void add_json_flag(CLI::App* cmd, bool& json,
                   const std::string& help = "Print one JSON object instead of tables");

/// Whether the command being run was given `--json`.
bool json_requested();

/// Prints `j` on stdout as the command's one JSON object (api::json_text: invalid UTF-8
/// replaced) and remembers it was printed, so that a later report_error adds no second object.
void print_json(const nlohmann::json& j);

/// Whether print_json has printed the command's JSON object.
bool json_printed();

}  // namespace onnxdbg::cli
