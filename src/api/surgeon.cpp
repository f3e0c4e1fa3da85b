// api::surgeon (include/onnxdbg/surgeon.h): one edit of a model, checked with lint and written.
#include "onnxdbg/surgeon.h"

#include <cstdio>

#include "model/model.h"
#include "report/surgeon_report.h"

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

}  // namespace

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
  ODB_RETURN_IF_ERROR(surgeon::save_edited_model(edited, src.base_dir, o.output));
  out.written = true;
  out.forced = broken;
  return out;
}

nlohmann::json to_json(const SurgeonResult& r) {
  return {{"command", r.command},
          {"model", r.model.string()},
          {"output", r.output.string()},
          {"written", r.written},
          {"forced", r.forced},
          {"nodes", r.nodes},
          {"check", report::edit_check_json(r.check)},
          {r.command, r.details}};
}

void print_text(const SurgeonResult& r, std::ostream& os) {
  os << r.summary << "\n";
  if (!r.written) return;
  os << "wrote " << r.output.string() << " (" << r.nodes << " nodes"
     << (r.forced ? ", " + std::to_string(r.check.errors.size()) + " LINT ERRORS" : "") << ")\n";
}

}  // namespace onnxdbg::api
