// `onnxdbg conformance`: run ONNX backend test folders (model.onnx + test_data_set_N) on one or
// more backends and print pass / fail / unsupported per case with each failure's reason.
#include "onnxdbg/conformance.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/progress.h"

namespace onnxdbg::cli {

namespace {

struct ConformanceArgs {
  std::vector<std::string> dirs;
  std::string backends = "reference";
  std::string filter;
  double rtol = 1e-3;
  double atol = 1e-7;
  bool json = false;
  bool failures_only = false;
};

int conformance_command(const ConformanceArgs& a) {
  api::ConformanceOptions o;
  // Each comma-separated item is one backend (no provider lists here).
  for (const auto& item : split_list({a.backends})) {
    auto spec = BackendSpec::parse(item);
    if (!spec) return report_error(spec.status());
    o.backends.push_back(*spec);
  }
  if (o.backends.empty()) return report_error(invalid_argument("--backends lists no backend"));
  o.dirs.assign(a.dirs.begin(), a.dirs.end());
  o.filter = a.filter;
  o.rtol = a.rtol;
  o.atol = a.atol;
  ProgressLine line(!a.json, "");
  auto result = api::conformance(o, interruptible_context(line));
  line.clear();
  if (!result) return report_error(result.status());
  if (a.json)
    print_json(api::to_json(*result));
  else
    api::print_text(*result, std::cout, api::color_for(1), a.failures_only);
  return result->any_failed() ? kExitMismatch : kExitOk;
}

}  // namespace

void add_conformance_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<ConformanceArgs>();
  auto* cmd = app.add_subcommand(
      "conformance",
      "Run ONNX backend test cases (folders with model.onnx and test_data_set_N/) on backends.");
  cmd->add_option("dirs", args->dirs,
                  "Case folders, or folders of case folders (e.g. "
                  "/usr/share/libonnx-testdata/data/node)")
      ->required();
  cmd->add_option("--backends,--backend", args->backends,
                  "Comma-separated backends to run, each NAME[:KEY=VALUE]...")
      ->capture_default_str();
  cmd->add_option("--filter", args->filter, "Only cases whose folder name contains this text");
  cmd->add_option("--rtol", args->rtol, "Relative tolerance")->capture_default_str();
  cmd->add_option("--atol", args->atol, "Absolute tolerance")->capture_default_str();
  cmd->add_flag("--failures-only", args->failures_only,
                "List only cases that did not pass everywhere");
  add_json_flag(cmd, args->json,
                "Print one JSON object (passed, failed, unsupported, total, cases)");
  cmd->footer(
      "Exit status: 0 when no case failed (unsupported cases do not count), 1 otherwise, 2 on a "
      "usage error.");
  cmd->callback([args, &ctx] { ctx.exit_code = conformance_command(*args); });
}

}  // namespace onnxdbg::cli
