// `onnxdbg data`: work with saved model data. `data to-input INPUTS... OUTPUTS... -o FILE` merges
// input and (layerwise) output files into one file for --load-inputs, as Polygraphy's
// `polygraphy data to-input` does.
#include "onnxdbg/data.h"

#include <iostream>

#include "cli/commands.h"

namespace onnxdbg::cli {

namespace {

struct ToInputArgs {
  std::vector<std::string> paths;
  std::string output;
  std::string model;
};

int to_input_command(const ToInputArgs& a) {
  api::DataToInputOptions o;
  o.paths.assign(a.paths.begin(), a.paths.end());
  o.output = a.output;
  o.model = a.model;
  auto r = api::data_to_input(o);
  if (!r) return report_error(r.status());
  api::print_messages(r->messages, std::cerr, true);
  std::cout << "wrote " << a.output << ": " << r->samples
            << (r->samples == 1 ? " sample, " : " samples, ") << r->tensors << " tensors\n";
  return kExitOk;
}

}  // namespace

void add_data_command(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("data", "Work with saved inputs and outputs.");
  cmd->require_subcommand(1);
  auto args = std::make_shared<ToInputArgs>();
  auto* to_input = cmd->add_subcommand(
      "to-input",
      "Merge input and output files (.npz, Polygraphy JSON inputs or RunResults, test_data_set "
      "folders, named .pb) into one file usable with run --load-inputs, like `polygraphy data "
      "to-input`. Sample k of the result holds sample k of every file; later files win on equal "
      "names.");
  to_input->add_option("paths", args->paths, "Input and output data files, in order")->required();
  to_input
      ->add_option("-o,--output", args->output,
                   "The merged file: .json (Polygraphy's input list, any number of samples) "
                   "or .npz (one sample)")
      ->required();
  to_input->add_option("--model", args->model,
                       "Check that every merged tensor is a tensor of this model (other backends' "
                       "outputs saved as BACKEND/OUTPUT by run --save-outputs are left out)");
  to_input->footer("Exit status: 0 on success, 2 on bad input (nothing is written then).");
  to_input->callback([args, &ctx] { ctx.exit_code = to_input_command(*args); });
}

}  // namespace onnxdbg::cli
