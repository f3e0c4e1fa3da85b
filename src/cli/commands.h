// The onnxdbg subcommands. Each file cli/<command>.cpp defines add_<command>_command(), which
// registers the subcommand's options on the CLI11 app and a callback that runs it and stores the
// process exit code in CommandContext. main.cpp lists them once.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "onnxdbg/status.h"

namespace onnxdbg::cli {

struct CommandContext {
  int exit_code = 0;
};

/// Exit codes shared by all commands.
constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;  ///< run: backends disagree; lint: errors found
constexpr int kExitUsage = 2;     ///< bad usage, unreadable model, bad input

/// Prints "onnxdbg: error: <status>" to stderr and returns kExitUsage.
int report_error(const Status& st);

void add_inspect_command(CLI::App& app, CommandContext& ctx);
void add_run_command(CLI::App& app, CommandContext& ctx);
void add_conformance_command(CLI::App& app, CommandContext& ctx);
void add_diff_command(CLI::App& app, CommandContext& ctx);
void add_lint_command(CLI::App& app, CommandContext& ctx);
void add_view_command(CLI::App& app, CommandContext& ctx);
void add_surgeon_command(CLI::App& app, CommandContext& ctx);
void add_data_command(CLI::App& app, CommandContext& ctx);
void add_reduce_command(CLI::App& app, CommandContext& ctx);
void add_bisect_optimizers_command(CLI::App& app, CommandContext& ctx);
void add_batch_command(CLI::App& app, CommandContext& ctx);

/// `onnxdbg reduce ... --check CMD ARGS...`: moves everything after --check out of `args` (the
/// command line without argv[0]) so that the check command's own options are not parsed as ours.
void take_check_command(std::vector<std::string>& args);

}  // namespace onnxdbg::cli
