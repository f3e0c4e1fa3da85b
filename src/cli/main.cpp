// onnxdbg CLI entry point: registers every subcommand and turns uncaught errors into one sentence.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/options.h"
#include "core/run_limits.h"

namespace onnxdbg::cli {

namespace {
const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kModelError:
      return "model_error";
    case ErrorCode::kBackendError:
      return "backend_error";
    case ErrorCode::kInternal:
      return "internal";
    case ErrorCode::kCancelled:
      return "cancelled";
  }
  return "internal";
}
}  // namespace

int report_error(const Status& st) {
  std::cerr << "onnxdbg: error: " << st.to_string() << "\n";
  if (json_requested() && !json_printed())
    print_json({{"error", {{"code", error_code_name(st.code())}, {"message", st.to_string()}}}});
  return kExitUsage;
}

}  // namespace onnxdbg::cli

namespace {

/// Registers every command, parses the command line and runs the chosen command; returns the
/// exit status. CLI11's parse errors and --help/--version are answered here.
int run_cli(int argc, char** argv) {
  using namespace onnxdbg::cli;
  CLI::App app{
      "onnxdbg: debug ONNX models. Inspect them, run them on several backends and "
      "compare the outputs, and find where backends disagree."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "onnxdbg " ONNXDBG_VERSION);
  CommandContext ctx;
  add_inspect_command(app, ctx);
  add_run_command(app, ctx);
  add_conformance_command(app, ctx);
  add_diff_command(app, ctx);
  add_lint_command(app, ctx);
  add_view_command(app, ctx);
  add_surgeon_command(app, ctx);
  add_data_command(app, ctx);
  add_reduce_command(app, ctx);
  add_bisect_optimizers_command(app, ctx);
  add_batch_command(app, ctx);
  std::vector<std::string> args(argv + 1, argv + argc);
  take_check_command(args);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return ctx.exit_code;
}

}  // namespace

// Anything a command throws past its own handling becomes one sentence and exit status 2.
int main(int argc, char** argv) {
  // OpenBLAS's generic kernels on a CPU it does not know: start again with the right ones.
  onnxdbg::api::restart_with_better_openblas_core(argv);
  try {
    return run_cli(argc, argv);
  } catch (const std::bad_alloc&) {
    // An allocation no size check foresaw (a library's, a reader's): the user's answer is the
    // memory the process had, not a bug report.
    onnxdbg::cli::report_error(
        onnxdbg::Status(onnxdbg::ErrorCode::kInvalidArgument,
                        onnxdbg::out_of_memory_message("a buffer the command needed") +
                            "; give smaller --input-shapes or raise the limit"));
  } catch (const std::exception& e) {
    // A library's text ("stol", "[json.exception...]") names nothing a user can act on: say
    // that it is onnxdbg's bug, keeping the text for the report.
    onnxdbg::cli::report_error(onnxdbg::Status(
        onnxdbg::ErrorCode::kInternal,
        std::string("an unexpected error inside onnxdbg (") + e.what() +
            ") ended the command; please report it with the command line and the files"));
  } catch (...) {
    std::cerr << "onnxdbg: error: an unknown exception ended onnxdbg\n";
  }
  return onnxdbg::cli::kExitUsage;
}
