// `onnxdbg batch`: many models through many onnxdbg commands, each (model, command) a job run as
// an onnxdbg process with a timeout and a memory limit, on this machine or on a Ray cluster; a
// line per job as it ends, then the summary; the report folder holds every job's result,
// summary.json and index.html, and a second run runs only what is missing.
#include "onnxdbg/batch.h"

#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "core/run_limits.h"

namespace onnxdbg::cli {

namespace {

struct BatchArgs {
  std::vector<std::string> models;
  std::vector<std::string> commands;
  std::string out;
  std::string executor{option_defaults::executor};
  std::string address;
  int jobs = option_defaults::batch_jobs;
  double timeout = option_defaults::job_timeout;
  std::string max_memory;
  bool rerun = false;
  int retries = option_defaults::retries;
  bool json = false;
};

/// "[12/50] fail     models/a.onnx  run --layerwise  2.1 s  <line>"
void print_job_line(const api::BatchJob& j, size_t n) {
  std::string line = j.line;
  if (line.size() > 160) line = line.substr(0, 157) + "...";
  std::cerr << fmt::format("[{}] {:<8} {}  {}  {}{}\n", n, j.status, j.model, j.command,
                           j.cached ? "cached" : fmt::format("{:.1f} s", j.seconds),
                           line.empty() ? "" : "  " + line);
}

int batch_command(const BatchArgs& a) {
  api::BatchOptions o;
  o.models = a.models;
  o.commands = a.commands;
  o.report_dir = a.out;
  o.executor = a.executor;
  o.address = a.address;
  o.jobs = a.jobs;
  o.timeout = a.timeout;
  o.rerun = a.rerun;
  o.retries = a.retries;
  if (!a.max_memory.empty()) {
    auto bytes = parse_memory_size(a.max_memory);
    if (!bytes) return report_error(bytes.status());
    o.max_memory = *bytes;
  }
  ProgressLine line(!a.json, "");
  size_t n = 0;
  o.on_job_done = [&](const api::BatchJob& j) {
    line.clear();
    if (!a.json) print_job_line(j, ++n);
  };
  auto result = api::batch(o, interruptible_context(line));
  line.clear();
  if (!result) return report_error(result.status());
  api::print_messages(result->messages, std::cerr, !a.json);
  if (a.json)
    print_json(api::to_json(*result));
  else
    api::print_text(*result, std::cout, api::color_for(1));
  if (result->cancelled) return kExitUsage;
  for (const auto& j : result->jobs)
    if (j.status != "pass") return kExitMismatch;
  return kExitOk;
}

}  // namespace

void add_batch_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<BatchArgs>();
  auto* cmd = app.add_subcommand(
      "batch",
      "Run onnxdbg commands on many models: every (model, command) is a job, run as an onnxdbg "
      "process with a timeout and a memory limit, here (-j N at once) or on a Ray cluster; "
      "results are cached in the report folder, so running the batch again runs only what is "
      "missing.");
  cmd->add_option("models", args->models,
                  "Model files, folders (searched for *.onnx) and list files (one model per "
                  "line, `PATH [OPTIONS...]`: OPTIONS such as --input-shapes go to that model's "
                  "run, reduce and bisect-optimizers)")
      ->required();
  cmd->add_option("-c,--command", args->commands,
                  "An onnxdbg command without the model, quoted: \"run --backends "
                  "reference,onnxruntime --layerwise\", \"lint\" (repeatable; run, lint, inspect, "
                  "reduce, bisect-optimizers; batch adds --json and --html)")
      ->required();
  cmd->add_option("-o,--output", args->out,
                  "Report folder: jobs/<key>/ per job (record.json, output.json, page.html), "
                  "summary.json, index.html")
      ->required();
  cmd->add_option("-j," + flag_of("batch_jobs"), args->jobs, help_of("batch_jobs"));
  cmd->add_option(flag_of("job_timeout"), args->timeout, help_of("job_timeout"))
      ->capture_default_str();
  cmd->add_option(flag_of("job_max_memory"), args->max_memory, help_of("job_max_memory"));
  cmd->add_option(flag_of("executor"), args->executor, help_of("executor"))
      ->check(CLI::IsMember({"local", "ray"}))
      ->capture_default_str();
  cmd->add_option(flag_of("address"), args->address, help_of("address"));
  auto* rerun = cmd->add_flag(flag_of("rerun"), args->rerun, help_of("rerun"));
  cmd->add_flag("--resume")
      ->description(
          "Run only the jobs the report folder lacks, or whose last run timed "
          "out or crashed (the default)")
      ->excludes(rerun);
  cmd->add_option(flag_of("retries"), args->retries, help_of("retries"))->capture_default_str();
  add_json_flag(cmd, args->json, "Print summary.json instead of the summary");
  cmd->footer(
      "Exit status: 0 when every job passed, 1 when any failed, errored, timed out or crashed "
      "(the report says which), 2 on bad usage, an unreachable Ray cluster or Ctrl-C.\n"
      "Example: onnxdbg batch models/ --command \"run --layerwise\" --command lint -o report");
  cmd->callback([args, &ctx] { ctx.exit_code = batch_command(*args); });
}

}  // namespace onnxdbg::cli
