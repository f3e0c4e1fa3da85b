// `onnxdbg surgeon`: Polygraphy's model-editing subcommands (sanitize, extract, convert-opset,
// to-fp16) and set-opset. Each loads the model, calls src/surgeon/, checks the result with lint and
// writes it (or, with --force, writes it in spite of lint errors); --json prints what was done as
// one object.
#include "onnxdbg/surgeon.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"

namespace onnxdbg::cli {

namespace {

struct CommonArgs {
  std::string model;
  std::string output;
  bool json = false;
  bool force = false;
  // sanitize and convert-opset: the written model run against the original.
  std::string verify_backends;
  bool no_verify = false;
  Tolerance verify_tolerance;
};

// Runs the edit and prints what happened: the summary and "wrote OUT (N nodes)", or with --json
// one object {command, model, output, written, forced, nodes, check, <command>: details}. A model
// with lint errors is refused (exit 2) unless --force, which writes it, says so loudly and exits 1.
int run_surgeon(const CommonArgs& a, api::SurgeonOptions::Operation op) {
  api::SurgeonOptions o;
  o.model = a.model;
  o.output = a.output;
  o.force = a.force;
  o.operation = std::move(op);
  if (!a.verify_backends.empty() && !a.no_verify) {
    auto specs = parse_backend_list(a.verify_backends);
    if (!specs) return report_error(Status(specs.status()).with_context("--verify-backends"));
    o.verify_backends = std::move(*specs);
    o.verify_tolerance = a.verify_tolerance;
  }
  auto r = api::surgeon(o);
  if (!r) return report_error(r.status());
  api::print_messages(r->messages, std::cerr, !a.json);
  if (r->forced)
    std::cerr << "onnxdbg: WARNING: --force: writing " << a.output << " although "
              << r->check.summary() << "; runtimes may refuse to load it\n";
  if (a.json)
    print_json(api::to_json(*r));
  else
    api::print_text(*r, std::cout);
  if (!r->refused) return report_error(r->refused);
  return r->forced || r->outputs_changed() ? kExitMismatch : kExitOk;
}

// sanitize and convert-opset must not change what the model computes: the written model runs
// against the original (api::SurgeonOptions::verify_backends).
void add_verify_options(CLI::App* cmd, CommonArgs& a) {
  a.verify_backends = "reference,onnxruntime";
  cmd->add_option("--verify-backends", a.verify_backends,
                  "Backends on which the written model runs against the original, on the same "
                  "generated inputs, to check it computes the same outputs")
      ->capture_default_str();
  cmd->add_flag("--no-verify", a.no_verify, "Do not run the written model against the original");
  cmd->add_option("--atol", a.verify_tolerance.atol, "Absolute tolerance of that check")
      ->capture_default_str();
  cmd->add_option("--rtol", a.verify_tolerance.rtol, "Relative tolerance of that check")
      ->capture_default_str();
}

CLI::App* add_common(CLI::App& parent, const std::string& name, const std::string& help,
                     CommonArgs& a) {
  auto* cmd = parent.add_subcommand(name, help);
  cmd->add_option("model", a.model, "ONNX model file")->required();
  cmd->add_option("-o,--output", a.output, "Where to write the edited model")->required();
  add_json_flag(cmd, a.json,
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
  return run_surgeon(a, opt);
}

// --- extract
// ---------------------------------------------------------------------------------------

struct ExtractArgs : CommonArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

int extract_command(const ExtractArgs& a) {
  api::ExtractOperation op;
  for (const auto& item : split_list(a.inputs)) {
    auto t = surgeon::parse_extract_tensor(item, false);
    if (!t) return report_error(t.status());
    op.inputs.push_back(std::move(*t));
  }
  for (const auto& item : split_list(a.outputs)) {
    auto t = surgeon::parse_extract_tensor(item, true);
    if (!t) return report_error(t.status());
    op.outputs.push_back(std::move(*t));
  }
  return run_surgeon(a, std::move(op));
}

// --- convert-opset
// -----------------------------------------------------------------------------------

struct ConvertArgs : CommonArgs {
  int64_t opset = 0;
};

int convert_command(const ConvertArgs& a) {
  return run_surgeon(a, api::ConvertOpsetOperation{a.opset});
}

int set_opset_command(const ConvertArgs& a) {
  return run_surgeon(a, api::SetOpsetOperation{a.opset});
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
  return run_surgeon(a, opt);
}

}  // namespace

void add_surgeon_command(CLI::App& app, CommandContext& ctx) {
  auto* sg =
      app.add_subcommand("surgeon",
                         "Edit a model: fix shapes and fold constants, extract a subgraph, convert "
                         "or declare its opset, convert its precision (Polygraphy's surgeon).");
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
  add_verify_options(san, *s);
  san->footer(std::string(san->get_footer()) +
              " After writing, the result and the original run on --verify-backends with the "
              "same generated inputs; outputs that differ beyond --atol/--rtol are a WARNING and "
              "exit status 1.");
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
  add_verify_options(conv, *c);
  conv->callback([c, &ctx] { ctx.exit_code = convert_command(*c); });

  auto so = std::make_shared<ConvertArgs>();
  auto* set = add_common(*sg, "set-opset",
                         "Declare the default-domain opset without converting a node (for a "
                         "model whose nodes already have that opset's forms)",
                         *so);
  set->add_option("--opset", so->opset, "Opset to declare")->required();
  set->callback([so, &ctx] { ctx.exit_code = set_opset_command(*so); });

  auto f = std::make_shared<Fp16Args>();
  auto* half = add_common(*sg, "to-fp16", "Convert float32 weights and activations to float16", *f);
  half->add_flag("--keep-io-types", f->keep_io,
                 "Keep float32 graph inputs and outputs (Cast nodes inside)");
  half->add_option("--block-list", f->block,
                   "Op types that stay float32, with Casts at their edges: OpType,...");
  half->callback([f, &ctx] { ctx.exit_code = fp16_command(*f); });
}

}  // namespace onnxdbg::cli
