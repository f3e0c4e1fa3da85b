// Text and JSON rendering of lint findings.
#include "report/lint_report.h"

#include <map>

#include "model/graph.h"
#include "report/table.h"

namespace onnxdbg::report {

namespace {

std::string plural(int64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 || word == "info" ? "" : "s");
}

std::string node_cell(const lint::Finding& f) {
  if (f.node_index < 0) return "-";
  return f.label.empty() ? node_label(f.node, f.op_type, f.node_index) : f.label;
}

}  // namespace

std::string lint_summary(const std::vector<lint::Finding>& findings,
                         const std::string& model_name) {
  const auto c = lint::count_findings(findings);
  return plural(c.error, "error") + ", " + plural(c.warning, "warning") + ", " +
         plural(c.info, "info") + " in " + model_name;
}

void print_lint_report(const std::vector<lint::Finding>& findings, const std::string& model_name,
                       std::ostream& os, bool color) {
  // Errors are all listed; past kShownPerRule warnings or infos of one rule in one graph, the rest
  // are counted in one line, so a truncated model's 40 dead nodes do not bury its one error.
  constexpr int kShownPerRule = 5;
  size_t k = 0;
  while (k < findings.size()) {
    const std::string& graph = findings[k].graph;
    Table t({"severity", "rule", "node", "message"});
    std::map<std::string, int> shown, hidden;
    for (; k < findings.size() && findings[k].graph == graph; ++k) {
      const auto& f = findings[k];
      if (f.severity != lint::Severity::kError && shown[f.rule]++ >= kShownPerRule) {
        ++hidden[f.rule];
        continue;
      }
      const std::string sev(lint::severity_name(f.severity));
      const char* c = f.severity == lint::Severity::kError     ? "red"
                      : f.severity == lint::Severity::kWarning ? "yellow"
                                                               : "";
      t.add_row({*c ? colorize(sev, c, color) : sev, f.rule, node_cell(f), f.message});
    }
    for (const auto& [rule, n] : hidden)
      t.add_row(
          {"", rule, "", "... and " + std::to_string(n) + " more like these (--json lists all)"});
    os << colorize("graph " + graph, "bold", color) << "\n";
    t.print(os);
    os << "\n";
  }
  const auto c = lint::count_findings(findings);
  const std::string summary = lint_summary(findings, model_name);
  os << (c.error     ? colorize(summary, "red", color)
         : c.warning ? colorize(summary, "yellow", color)
                     : colorize(summary, "green", color))
     << "\n";
}

nlohmann::json lint_report_json(const std::vector<lint::Finding>& findings,
                                const std::string& model) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : findings)
    list.push_back({{"rule", f.rule},
                    {"severity", std::string(lint::severity_name(f.severity))},
                    {"node", f.node},
                    {"node_index", f.node_index},
                    {"op_type", f.op_type},
                    {"graph", f.graph},
                    {"message", f.message}});
  const auto c = lint::count_findings(findings);
  return {{"model", model},
          {"findings", list},
          {"counts", {{"error", c.error}, {"warning", c.warning}, {"info", c.info}}}};
}

}  // namespace onnxdbg::report
