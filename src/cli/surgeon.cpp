// `onnxdbg surgeon`: Polygraphy's model-editing subcommands (sanitize, extract, convert-opset,
// to-fp16). Each loads the model, calls src/surgeon/, checks the result with lint and writes it
// (or, with --force, writes it in spite of lint errors); --json prints what was done as one object.
#include "surgeon/surgeon.h"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "report/surgeon_report.h"
#include "runner/input_gen.h"

namespace onnxdbg::cli {

namespace {

// "412 ms", "1.37 s".
std::string fmt_seconds(double s) {
  char buf[32];
  if (s < 1)
    std::snprintf(buf, sizeof buf, "%.0f ms", s * 1000);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

struct CommonArgs {
  std::string model;
  std::string output;
  bool json = false;
  bool force = false;
};

// Splits "a:[1,2]:float32,b" on commas outside brackets; repeated options are joined.
std::vector<std::string> split_list(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    std::string cur;
    int depth = 0;
    for (char c : a) {
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

// Checks the edited model and writes it: "wrote OUT (N nodes)", or with --json one object
// {command, model, output, written, forced, nodes, check, <command>: details}. A model with lint
// errors is refused (exit 2) unless --force, which writes it, says so loudly and exits 1.
int finish(const LoadedModel& src, const onnx::ModelProto& edited, const CommonArgs& a,
           const std::string& command, nlohmann::json details) {
  auto check = surgeon::check_edit(edited, src.base_dir);
  if (!check) return report_error(check.status());
  const bool broken = !check->errors.empty();
  const int64_t nodes = surgeon::count_nodes(edited.graph());
  nlohmann::json j = {{"command", command},
                      {"model", a.model},
                      {"output", a.output},
                      {"written", false},
                      {"forced", false},
                      {"nodes", nodes},
                      {"check", report::edit_check_json(*check)},
                      {command, std::move(details)}};
  if (broken && !a.force) {
    if (a.json) std::cout << j.dump(2) << "\n";
    return report_error(
        model_error(check->summary() + ", so it was not written (--force writes it anyway)"));
  }
  if (broken)
    std::cerr << "onnxdbg: WARNING: --force: writing " << a.output << " although "
              << check->summary() << "; runtimes may refuse to load it\n";
  if (Status st = surgeon::save_edited_model(edited, src.base_dir, a.output); !st)
    return report_error(st);
  j["written"] = true;
  j["forced"] = broken;
  if (a.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "wrote " << a.output << " (" << nodes << " nodes"
              << (broken ? ", " + std::to_string(check->errors.size()) + " LINT ERRORS" : "")
              << ")\n";
  }
  return broken ? kExitMismatch : kExitOk;
}

Expected<LoadedModel> load(const std::string& path) {
  auto m = load_model(path);
  if (m)
    for (const auto& w : m->warnings) std::cerr << "onnxdbg: warning: " << w << "\n";
  return m;
}

CLI::App* add_common(CLI::App& parent, const std::string& name, const std::string& help,
                     CommonArgs& a) {
  auto* cmd = parent.add_subcommand(name, help);
  cmd->add_option("model", a.model, "ONNX model file")->required();
  cmd->add_option("-o,--output", a.output, "Where to write the edited model")->required();
  cmd->add_flag("--json", a.json,
                "Print one JSON object (what was done, the check's errors) instead of text");
  cmd->add_flag("--force", a.force,
                "Write the result even when the final lint check finds errors (exit status 1)");
  cmd->footer(
      "The result is checked with lint (ONNX checker included) and not written when it "
      "has errors, unless --force. Exit status: 0 on success, 1 when --force wrote a model "
      "with lint errors, 2 on bad usage, an unreadable model, an edit that failed or a "
      "result refused by the check.");
  return cmd;
}

// --- sanitize ------------------------------------------------------------------------------------

struct SanitizeArgs : CommonArgs {
  std::vector<std::string> shapes;
  bool fold = false;
  int64_t fold_size_limit = 0;
  bool cleanup = false;
  bool toposort = false;
};

int sanitize_command(const SanitizeArgs& a) {
  surgeon::SanitizeOptions opt;
  if (Status st = parse_input_shapes(a.shapes, opt.input_shapes); !st) return report_error(st);
  opt.fold_constants = a.fold;
  opt.fold.size_limit = a.fold_size_limit;
  opt.cleanup = a.cleanup;
  opt.toposort = a.toposort;
  auto model = load(a.model);
  if (!model) return report_error(model.status());
  onnx::ModelProto edited = model->proto;
  auto rep = surgeon::sanitize(edited, model->base_dir, opt);
  if (!rep) return report_error(rep.status());
  if (!a.json) {
    if (rep->fold)
      for (const auto& n : rep->fold->notes) std::cerr << "onnxdbg: note: " << n << "\n";
    std::cout << rep->summary() << " (" << fmt_seconds(rep->seconds) << ")\n";
  }
  return finish(*model, edited, a, "sanitize", report::sanitize_report_json(*rep));
}

// --- extract
// ---------------------------------------------------------------------------------------

struct ExtractArgs : CommonArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

int extract_command(const ExtractArgs& a) {
  std::vector<surgeon::ExtractTensor> ins, outs;
  for (const auto& item : split_list(a.inputs)) {
    auto t = surgeon::parse_extract_tensor(item, false);
    if (!t) return report_error(t.status());
    ins.push_back(std::move(*t));
  }
  for (const auto& item : split_list(a.outputs)) {
    auto t = surgeon::parse_extract_tensor(item, true);
    if (!t) return report_error(t.status());
    outs.push_back(std::move(*t));
  }
  auto model = load(a.model);
  if (!model) return report_error(model.status());
  onnx::ModelProto edited = model->proto;
  const int64_t before = surgeon::count_nodes(edited.graph());
  if (Status st = surgeon::extract(edited, ins, outs); !st) return report_error(st);
  const int64_t after = surgeon::count_nodes(edited.graph());
  if (!a.json)
    std::cout << "extracted " << after << " of " << before << " nodes: " << ins.size() << " input"
              << (ins.size() == 1 ? "" : "s") << ", " << outs.size() << " output"
              << (outs.size() == 1 ? "" : "s") << "\n";
  nlohmann::json details = {{"nodes_before", before},
                            {"nodes_after", after},
                            {"inputs", nlohmann::json::array()},
                            {"outputs", nlohmann::json::array()}};
  for (const auto& t : ins) details["inputs"].push_back(t.name);
  for (const auto& t : outs) details["outputs"].push_back(t.name);
  return finish(*model, edited, a, "extract", std::move(details));
}

// --- convert-opset
// -----------------------------------------------------------------------------------

struct ConvertArgs : CommonArgs {
  int64_t opset = 0;
};

int convert_command(const ConvertArgs& a) {
  auto model = load(a.model);
  if (!model) return report_error(model.status());
  onnx::ModelProto edited = model->proto;
  const int64_t from = model_opset(edited, "");
  if (Status st = surgeon::convert_opset(edited, a.opset); !st) return report_error(st);
  const int64_t to = model_opset(edited, "");
  if (!a.json) std::cout << "converted opset " << from << " -> " << to << "\n";
  return finish(*model, edited, a, "convert-opset", {{"from", from}, {"to", to}});
}

// --- to-fp16
// ------------------------------------------------------------------------------------------

struct Fp16Args : CommonArgs {
  bool keep_io = false;
  std::vector<std::string> block;
};

int fp16_command(const Fp16Args& a) {
  surgeon::Fp16Options opt;
  opt.keep_io_types = a.keep_io;
  opt.block_list = split_list(a.block);
  auto model = load(a.model);
  if (!model) return report_error(model.status());
  onnx::ModelProto edited = model->proto;
  auto st = surgeon::to_fp16(edited, model->base_dir, opt);
  if (!st) return report_error(st.status());
  if (!a.json)
    std::cout << "converted " << st->initializers_converted << " initializers and "
              << st->constants_converted << " Constant nodes to float16; inserted "
              << st->casts_inserted << " Cast nodes; " << st->blocked_nodes
              << " nodes kept in float32\n";
  return finish(*model, edited, a, "to-fp16", report::fp16_stats_json(*st));
}

}  // namespace

void add_surgeon_command(CLI::App& app, CommandContext& ctx) {
  auto* sg =
      app.add_subcommand("surgeon",
                         "Edit a model: fix shapes and fold constants, extract a subgraph, convert "
                         "its opset or precision (Polygraphy's surgeon).");
  sg->require_subcommand(1);

  auto s = std::make_shared<SanitizeArgs>();
  auto* san = add_common(*sg, "sanitize",
                         "Set input shapes, fold constants, remove dead nodes, reorder nodes", *s);
  san->add_option("--override-input-shapes", s->shapes,
                  "Static input shapes: NAME:1x3x224x224 or NAME:[1,3,224,224] (repeatable)");
  san->add_flag("--fold-constants", s->fold,
                "Replace every subgraph computable from constants by initializers (to a fixed "
                "point, inside If/Loop/Scan bodies too; Shape of statically shaped tensors "
                "counts as constant)");
  san->add_option("--fold-size-limit", s->fold_size_limit,
                  "Do not fold outputs larger than this many bytes (0: no limit)");
  san->add_flag("--cleanup", s->cleanup, "Remove dead nodes and unused initializers");
  san->add_flag("--toposort", s->toposort,
                "Reorder nodes topologically (repairs nodes that read values defined later)");
  san->callback([s, &ctx] { ctx.exit_code = sanitize_command(*s); });

  auto e = std::make_shared<ExtractArgs>();
  auto* ext = add_common(*sg, "extract", "Cut out the subgraph between given tensors", *e);
  ext->add_option("--inputs", e->inputs,
                  "Inputs of the subgraph: NAME:SHAPE:DTYPE,... (SHAPE 1x3x8x8 or [1,3,8,8], "
                  "SHAPE and DTYPE may be 'auto': from shape inference)");
  ext->add_option("--outputs", e->outputs, "Outputs of the subgraph: NAME[:DTYPE],...")->required();
  ext->callback([e, &ctx] { ctx.exit_code = extract_command(*e); });

  auto c = std::make_shared<ConvertArgs>();
  auto* conv = add_common(*sg, "convert-opset",
                          "Convert the default-domain opset with ONNX's version converter", *c);
  conv->add_option("--opset", c->opset, "Target opset")->required();
  conv->callback([c, &ctx] { ctx.exit_code = convert_command(*c); });

  auto f = std::make_shared<Fp16Args>();
  auto* half = add_common(*sg, "to-fp16", "Convert float32 weights and activations to float16", *f);
  half->add_flag("--keep-io-types", f->keep_io,
                 "Keep float32 graph inputs and outputs (Cast nodes inside)");
  half->add_option("--block-list", f->block,
                   "Op types that stay float32, with Casts at their edges: OpType,...");
  half->callback([f, &ctx] { ctx.exit_code = fp16_command(*f); });
}

}  // namespace onnxdbg::cli
