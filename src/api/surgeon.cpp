// api::surgeon (include/onnxdbg/surgeon.h): one edit of a model, checked with lint and written.
#include "onnxdbg/surgeon.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>

#include "comparator/input_gen.h"
#include "model/external_data.h"
#include "model/model.h"
#include "report/surgeon_report.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::api {

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

/// The edit itself: fills command, summary and details. Errors: the operation's.
Status apply(const SurgeonOptions::Operation& op, const LoadedModel& src, onnx::ModelProto& edited,
             SurgeonResult& out) {
  if (const auto* s = std::get_if<surgeon::SanitizeOptions>(&op)) {
    ODB_ASSIGN_OR_RETURN(surgeon::SanitizeReport rep, surgeon::sanitize(edited, src.base_dir, *s));
    out.command = "sanitize";
    if (rep.fold)
      for (const auto& n : rep.fold->notes) add_note(out.messages, n);
    out.summary = rep.summary() + " (" + fmt_seconds(rep.seconds) + ")";
    out.details = report::sanitize_report_json(rep);
  } else if (const auto* e = std::get_if<ExtractOperation>(&op)) {
    const int64_t before = surgeon::count_nodes(edited.graph());
    ODB_RETURN_IF_ERROR(surgeon::extract(edited, e->inputs, e->outputs));
    const int64_t after = surgeon::count_nodes(edited.graph());
    out.command = "extract";
    out.summary = "extracted " + std::to_string(after) + " of " + std::to_string(before) +
                  " nodes: " + std::to_string(e->inputs.size()) + " input" +
                  (e->inputs.size() == 1 ? "" : "s") + ", " + std::to_string(e->outputs.size()) +
                  " output" + (e->outputs.size() == 1 ? "" : "s");
    out.details = {{"nodes_before", before},
                   {"nodes_after", after},
                   {"inputs", nlohmann::json::array()},
                   {"outputs", nlohmann::json::array()}};
    for (const auto& t : e->inputs) out.details["inputs"].push_back(t.name);
    for (const auto& t : e->outputs) out.details["outputs"].push_back(t.name);
  } else if (const auto* c = std::get_if<ConvertOpsetOperation>(&op)) {
    const int64_t from = model_opset(edited, "");
    ODB_RETURN_IF_ERROR(surgeon::convert_opset(edited, c->opset));
    const int64_t to = model_opset(edited, "");
    out.command = "convert-opset";
    out.summary = "converted opset " + std::to_string(from) + " -> " + std::to_string(to);
    out.details = {{"from", from}, {"to", to}};
  } else if (const auto* so = std::get_if<SetOpsetOperation>(&op)) {
    const int64_t from = model_opset(edited, "");
    ODB_RETURN_IF_ERROR(surgeon::set_opset(edited, so->opset));
    out.command = "set-opset";
    out.summary = "declared opset " + std::to_string(from) + " -> " + std::to_string(so->opset) +
                  " (no node converted)";
    out.details = {{"from", from}, {"to", so->opset}};
  } else {
    const auto& f = std::get<surgeon::Fp16Options>(op);
    ODB_ASSIGN_OR_RETURN(surgeon::Fp16Stats st, surgeon::to_fp16(edited, src.base_dir, f));
    out.command = "to-fp16";
    out.summary = "converted " + std::to_string(st.initializers_converted) + " initializers and " +
                  std::to_string(st.constants_converted) + " Constant nodes to float16; inserted " +
                  std::to_string(st.casts_inserted) + " Cast nodes; " +
                  std::to_string(st.blocked_nodes) + " nodes kept in float32";
    out.details = report::fp16_stats_json(st);
  }
  return Status::ok();
}

/// Runs `original` and `written` on the backend `spec` with `inputs` and compares the outputs
/// (the original's are the golden values).
OutputCheck check_on_backend(const BackendSpec& spec, const std::filesystem::path& original,
                             const std::filesystem::path& written, const TensorMap& inputs,
                             const Tolerance& tol) {
  OutputCheck c;
  c.backend = spec.to_string();
  auto backend = create_backend(spec);
  if (!backend) {
    c.error = backend.status().message();
    return c;
  }
  auto outputs = [&](const std::filesystem::path& path) -> Expected<TensorMap> {
    ODB_ASSIGN_OR_RETURN(auto session, (*backend)->load(path));
    ODB_ASSIGN_OR_RETURN(SessionRunResult r, session->run(inputs));
    return std::move(r.outputs);
  };
  auto before = outputs(original);
  if (!before) {
    c.error = "the original fails: " + before.status().message();
    return c;
  }
  auto after = outputs(written);
  if (!after) {
    c.error = "the written model fails: " + after.status().message();
    return c;
  }
  c.pass = true;
  for (const auto& [name, golden] : *before) {
    auto it = after->find(name);
    if (it == after->end()) {
      if (c.pass) c.reason = "output '" + name + "' is missing";
      c.pass = false;
      continue;
    }
    const TensorComparison cmp = compare_tensors(it->second, golden, tol);
    if (c.worst_output.empty() || cmp.max_abs_error > c.max_abs_error) {
      c.max_abs_error = cmp.max_abs_error;
      c.worst_output = name;
    }
    if (!cmp.pass && c.pass) c.reason = "output '" + name + "': " + cmp.reason;
    c.pass = c.pass && cmp.pass;
  }
  return c;
}

/// The written model against the original on each verify backend (sanitize and convert-opset
/// must not change what a model computes: issue 19, item 8).
void verify_outputs(const SurgeonOptions& o, const onnx::ModelProto& edited, SurgeonResult& out) {
  const bool preserves = std::holds_alternative<surgeon::SanitizeOptions>(o.operation) ||
                         std::holds_alternative<ConvertOpsetOperation>(o.operation);
  if (!preserves || o.verify_backends.empty()) return;
  auto inputs = generate_inputs(edited.graph(), InputGenOptions{});
  if (!inputs) {
    out.verification_note =
        "the written model was not run against the original: " + inputs.status().message() +
        " (--override-input-shapes fixes dims)";
    return;
  }
  for (const auto& spec : o.verify_backends)
    out.verification.push_back(
        check_on_backend(spec, o.model, o.output, *inputs, o.verify_tolerance));
}

}  // namespace

bool SurgeonResult::outputs_changed() const {
  return std::any_of(verification.begin(), verification.end(),
                     [](const OutputCheck& c) { return c.error.empty() && !c.pass; });
}

Expected<SurgeonResult> surgeon(const SurgeonOptions& o) {
  SurgeonResult out;
  out.model = o.model;
  out.output = o.output;
  ODB_ASSIGN_OR_RETURN(LoadedModel src, load_model(o.model));
  for (const auto& w : src.warnings) add_warning(out.messages, w);
  onnx::ModelProto edited = src.proto;
  ODB_RETURN_IF_ERROR(apply(o.operation, src, edited, out));
  ODB_ASSIGN_OR_RETURN(out.check, surgeon::check_edit(edited, src.base_dir));
  out.nodes = surgeon::count_nodes(edited.graph());
  const bool broken = !out.check.errors.empty();
  if (broken && !o.force) {
    out.refused =
        model_error(out.check.summary() + ", so it was not written (--force writes it anyway)");
    return out;
  }
  ODB_RETURN_IF_ERROR(save_model_with_external_data(edited, src.base_dir, o.output));
  out.written = true;
  out.forced = broken;
  verify_outputs(o, edited, out);
  return out;
}

nlohmann::json to_json(const SurgeonResult& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.verification)
    checks.push_back(
        {{"backend", c.backend},
         {"error", c.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.error)},
         {"pass", c.pass},
         {"max_abs_error", c.max_abs_error},
         {"worst_output", c.worst_output},
         {"reason", c.reason}});
  return {{"command", r.command},
          {"model", r.model.string()},
          {"output", r.output.string()},
          {"written", r.written},
          {"forced", r.forced},
          {"nodes", r.nodes},
          {"check", report::edit_check_json(r.check)},
          {"verification",
           {{"backends", checks},
            {"note", r.verification_note.empty() ? nlohmann::json(nullptr)
                                                 : nlohmann::json(r.verification_note)}}},
          {r.command, r.details}};
}

void print_text(const SurgeonResult& r, std::ostream& os) {
  os << r.summary << "\n";
  if (!r.written) return;
  os << "wrote " << r.output.string() << " (" << r.nodes << " nodes"
     << (r.forced ? ", " + std::to_string(r.check.errors.size()) + " LINT ERRORS" : "") << ")\n";
  if (!r.verification_note.empty()) os << "note: " << r.verification_note << "\n";
  std::vector<std::string> same;
  for (const auto& c : r.verification) {
    if (!c.error.empty())
      os << "note: not checked on " << c.backend << ": " << c.error << "\n";
    else if (c.pass)
      same.push_back(fmt::format("{} (max abs error {:.3g})", c.backend, c.max_abs_error));
  }
  if (!same.empty())
    os << "checked: the written model computes the original's outputs on "
       << fmt::format("{}", fmt::join(same, ", ")) << "\n";
  for (const auto& c : r.verification)
    if (c.error.empty() && !c.pass)
      os << "WARNING: on " << c.backend << " the written model's outputs differ from the "
         << "original's: " << c.reason << " (max abs error "
         << fmt::format("{:.3g}", c.max_abs_error) << " in '" << c.worst_output << "')\n";
}

}  // namespace onnxdbg::api
