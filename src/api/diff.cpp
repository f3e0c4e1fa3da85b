// api::diff (include/onnxdbg/diff.h): load both models, diff them, render the difference.
#include "onnxdbg/diff.h"

#include "diff/diff.h"
#include "report/table.h"

namespace onnxdbg::api {

Expected<DiffResult> diff(const DiffOptions& options) {
  DiffResult out;
  ODB_ASSIGN_OR_RETURN(out.a, Model::load(options.a));
  ODB_ASSIGN_OR_RETURN(out.b, Model::load(options.b));
  ODB_ASSIGN_OR_RETURN(out.diff, diff_models(out.a.loaded(), out.b.loaded()));
  return out;
}

nlohmann::json to_json(const DiffResult& result) {
  const ModelDiff& d = result.diff;
  nlohmann::json j;
  j["summary"] = d.summary;
  j["identical"] = d.identical();
  j["only_in_a"] = d.only_in_a;
  j["only_in_b"] = d.only_in_b;
  j["changed"] = nlohmann::json::array();
  for (const auto& c : d.changed)
    j["changed"].push_back({{"node", c.item}, {"what", c.what}, {"graph", c.graph}});
  j["graph"] = nlohmann::json::array();
  for (const auto& c : d.graph_changes) j["graph"].push_back({{"item", c.item}, {"what", c.what}});
  j["matched_by_name"] = d.matched_by_name;
  j["matched_by_position"] = d.matched_by_position;
  return j;
}

namespace {

void print_names(const std::string& title, const std::vector<std::string>& names,
                 std::ostream& os) {
  if (names.empty()) return;
  os << "\n" << title << " (" << names.size() << "):\n";
  const size_t shown = std::min<size_t>(names.size(), 50);
  for (size_t i = 0; i < shown; ++i) os << "  " << names[i] << "\n";
  if (shown < names.size())
    os << "  ... and " << names.size() - shown << " more (--json lists all)\n";
}

void print_changes(const std::string& title, const std::vector<DiffChange>& changes,
                   const char* head, std::ostream& os) {
  if (changes.empty()) return;
  os << "\n" << title << ":\n";
  report::Table t({head, "difference"});
  for (const auto& c : changes) t.add_row({c.item, c.what});
  t.print(os);
}

}  // namespace

void print_text(const DiffResult& result, std::ostream& os) {
  const ModelDiff& d = result.diff;
  os << d.summary << "\n";
  print_names("nodes only in " + d.a_name, d.only_in_a, os);
  print_names("nodes only in " + d.b_name, d.only_in_b, os);
  print_changes("changed nodes", d.changed, "node", os);
  print_changes("graph", d.graph_changes, "item", os);
  os << "\n"
     << d.matched_by_name << " nodes matched by name, " << d.matched_by_position
     << " by op type and position\n";
}

report::ViewerOverlays diff_overlays(const DiffResult& result) {
  report::ViewerOverlays ov;
  ov.diff = result.diff;
  ov.diff_model = result.b;
  return ov;
}

}  // namespace onnxdbg::api
