// JSON for `onnxdbg surgeon --json`: the stats structs of src/surgeon/ field by field, with the
// names the structs use, so a program reads the same words as the header documents.
#include "report/surgeon_report.h"

namespace onnxdbg::report {

nlohmann::json fold_stats_json(const surgeon::FoldStats& s) {
  return {{"nodes_folded", s.nodes_folded},
          {"subgraph_nodes_folded", s.subgraph_nodes_folded},
          {"initializers_added", s.initializers_added},
          {"passes", s.passes},
          {"skipped_large", s.skipped_large},
          {"notes", s.notes}};
}

nlohmann::json sanitize_report_json(const surgeon::SanitizeReport& r) {
  nlohmann::json j = {{"nodes_before", r.nodes_before},
                      {"nodes_after", r.nodes_after},
                      {"overridden_inputs", r.overridden_inputs},
                      {"fold", nullptr},
                      {"cleanup", nullptr},
                      {"moved_nodes", nullptr},
                      {"seconds", r.seconds},
                      {"summary", r.summary()}};
  if (r.fold) j["fold"] = fold_stats_json(*r.fold);
  if (r.cleanup)
    j["cleanup"] = {{"dead_nodes", r.cleanup->dead_nodes},
                    {"unused_initializers", r.cleanup->unused_initializers}};
  if (r.moved_nodes) j["moved_nodes"] = *r.moved_nodes;
  return j;
}

nlohmann::json fp16_stats_json(const surgeon::Fp16Stats& s) {
  return {{"initializers_converted", s.initializers_converted},
          {"constants_converted", s.constants_converted},
          {"casts_inserted", s.casts_inserted},
          {"blocked_nodes", s.blocked_nodes}};
}

nlohmann::json edit_check_json(const surgeon::EditCheck& c) {
  return {{"errors", c.errors.size()}, {"messages", c.errors}};
}

}  // namespace onnxdbg::report
