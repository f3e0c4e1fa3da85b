// onnxdbg inspect MODEL [--mode basic|layers|attrs|weights] [--json]: prints a model's summary
// (see inspect/inspect.h) for people, or as one JSON object for programs.

#include "onnxdbg/inspect.h"

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"

namespace onnxdbg::cli {

namespace {

struct InspectArgs {
  std::string model;
  std::string mode = "basic";
  bool show_tensors = false;
  bool json = false;
};

int run_inspect(const InspectArgs& args) {
  auto result = api::inspect({args.model, args.mode, args.show_tensors});
  if (!result) return report_error(result.status());
  if (args.json)
    print_json(api::to_json(*result));
  else
    api::print_text(*result, std::cout);
  std::cout.flush();
  return kExitOk;
}

}  // namespace

void add_inspect_command(CLI::App& app, CommandContext& ctx) {
  // The callback owns the parsed arguments: CLI11 keeps it alive for as long as the app.
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Summarise a model: metadata, inputs and outputs, op histogram; with --mode, "
      "every node, attributes, or weight statistics");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--mode", args->mode,
                  "basic: summary; layers: + every node and subgraph; attrs: + attributes; "
                  "weights: + per-weight min/max/mean/std and NaN/Inf counts")
      ->check(CLI::IsMember({"basic", "layers", "attrs", "weights"}))
      ->capture_default_str();
  cmd->add_flag(
      "--show-tensors", args->show_tensors,
      "Also list every tensor of the main graph (inputs, initializers, node outputs) with "
      "the dtype and shape ONNX shape inference gives it (symbolic dims by name, ? when "
      "unknown) and the node that makes it");
  add_json_flag(cmd, args->json, "print one JSON object instead of text");
  cmd->callback([&ctx, args] { ctx.exit_code = run_inspect(*args); });
}

}  // namespace onnxdbg::cli
