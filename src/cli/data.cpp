// `onnxdbg data`: work with saved model data. `data to-input INPUTS... OUTPUTS... -o FILE` merges
// input and (layerwise) output files into one file for --load-inputs, as Polygraphy's
// `polygraphy data to-input` does.
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "data/samples.h"
#include "model/model.h"

namespace onnxdbg::cli {

namespace {

struct ToInputArgs {
  std::vector<std::string> paths;
  std::string output;
  std::string model;
};

int to_input_command(const ToInputArgs& a) {
  std::vector<std::filesystem::path> paths(a.paths.begin(), a.paths.end());
  auto merged = merge_sample_files(paths);
  if (!merged) return report_error(merged.status());
  if (!a.model.empty()) {
    // With the model, refuse data of another model now rather than at `run --load-inputs`.
    auto model = load_model(a.model);
    if (!model) return report_error(model.status());
    const onnx::GraphProto& g = model->proto.graph();
    std::set<std::string> values;
    for (const auto& i : g.input()) values.insert(i.name());
    for (const auto& n : g.node())
      for (const auto& o : n.output()) values.insert(o);
    std::set<std::string> outputs;
    for (const auto& o : g.output()) outputs.insert(o.name());
    size_t dropped = 0;
    for (auto& s : *merged) {
      // Other backends' outputs, as `run --save-outputs` writes them (BACKEND/NAME), are not
      // data for the model: leave them out.
      dropped += std::erase_if(s, [&](const auto& kv) {
        const size_t slash = kv.first.rfind('/');
        return !values.count(kv.first) && slash != std::string::npos &&
               outputs.count(kv.first.substr(slash + 1));
      });
      for (const auto& [name, t] : s)
        if (!values.count(name))
          return report_error(invalid_argument("the merged data holds '" + name +
                                               "', which is not a tensor of " + a.model +
                                               "; was a file saved from another model?"));
    }
    if (dropped)
      std::cerr << "onnxdbg: note: left out " << dropped
                << " tensor(s) named BACKEND/OUTPUT (other backends' outputs)\n";
  }
  if (Status st = save_samples(a.output, *merged); !st) return report_error(st);
  size_t tensors = 0;
  for (const auto& s : *merged) tensors += s.size();
  std::cout << "wrote " << a.output << ": " << merged->size()
            << (merged->size() == 1 ? " sample, " : " samples, ") << tensors << " tensors\n";
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
