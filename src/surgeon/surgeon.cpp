// What every surgeon edit shares: checking the result with lint before it is written (the writer
// is model/external_data.h's save_model_with_external_data).
#include "surgeon/surgeon.h"

#include "lint/lint.h"
#include "model/graph.h"

namespace onnxdbg::surgeon {

namespace fs = std::filesystem;

int64_t count_nodes(const onnx::GraphProto& g) {
  int64_t n = 0;
  walk_graphs(g, [&](const GraphVisit& v) { n += v.graph->node_size(); });
  return n;
}

std::string EditCheck::summary() const {
  if (errors.empty()) return "";
  std::string list;
  for (size_t i = 0; i < errors.size() && i < 5; ++i) list += (i ? "; " : "") + errors[i];
  if (errors.size() > 5) list += "; and " + std::to_string(errors.size() - 5) + " more";
  return "the edited model has " + std::to_string(errors.size()) + " lint error" +
         (errors.size() == 1 ? "" : "s") + ": " + list;
}

Expected<EditCheck> check_edit(const onnx::ModelProto& model, const fs::path& base_dir) {
  LoadedModel lm;
  lm.proto = model;
  lm.base_dir = base_dir;
  ODB_ASSIGN_OR_RETURN(auto findings, lint::lint_model(lm));
  EditCheck check;
  for (const auto& f : findings)
    if (f.severity == lint::Severity::kError)
      check.errors.push_back(f.rule + ": " +
                             (f.graph != "main" && !f.graph.empty() ? f.graph + ": " : "") +
                             f.message);
  return check;
}

Status finish_edit(const onnx::ModelProto& model, const fs::path& base_dir) {
  ODB_ASSIGN_OR_RETURN(EditCheck check, check_edit(model, base_dir));
  if (check.errors.empty()) return Status::ok();
  return model_error(check.summary() + ", so it was not written");
}

}  // namespace onnxdbg::surgeon
