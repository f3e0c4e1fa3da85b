// The renderings of an api::BisectOptimizersResult: the JSON of `onnxdbg bisect-optimizers
// --json` and its text. Both read the same fields.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "onnxdbg/bisect_optimizers.h"
#include "onnxdbg/enum_names.h"
#include "report/table.h"

namespace onnxdbg::api {

namespace {

constexpr EnumNames<BisectOutcome, 3> kOutcomeNames{
    {{BisectOutcome::kNoDifference, "no_difference"},
     {BisectOutcome::kFound, "found"},
     {BisectOutcome::kNotFound, "not_found"}}};

const char* outcome_name(BisectOutcome o) { return enum_name(kOutcomeNames, o).data(); }

void print_culprits(const BisectOptimizersResult& r, std::ostream& os) {
  os << "\nculprits (1-minimal: each one enabled again, with the others disabled, breaks "
        "agreement):\n";
  report::Table t({"name", "disabled alone", "enabled alone (others disabled)"});
  for (const auto& e : r.effects)
    t.add_row({e.name, e.alone_restores ? "agree" : "still differs",
               r.effects.size() == 1 ? "-" : (e.reenabled_breaks ? "differs" : "agrees")});
  t.print(os, 2);
  if (r.fused.empty() && r.removed.empty() && r.first_divergent_node.empty()) return;
  os << "\nwhat they did (the model optimized with them against without them):\n";
  for (const auto& f : r.fused)
    os << "  " << f.node << " <- "
       << (f.replaced.empty() ? std::string("(added)")
                              : fmt::format("{}", fmt::join(f.replaced, " + ")))
       << "\n";
  for (const auto& n : r.removed) os << "  " << n << " removed\n";
  if (!r.optimized_with.empty())
    os << "  optimized models: " << r.optimized_with.string() << ", "
       << r.optimized_without.string() << "\n";
  if (!r.first_divergent_node.empty())
    os << "\nfirst divergent original node (with against without them): " << r.first_divergent_node
       << ": " << r.first_divergent_detail << "\n";
}

}  // namespace

nlohmann::json to_json(const BisectOptimizersResult& r) {
  nlohmann::json j;
  j["model"] = r.model;
  j["backend"] = r.backend;
  j["against"] = r.against;
  j["outcome"] = outcome_name(r.outcome);
  j["difference"] = r.difference;
  j["candidates"] = r.candidates;
  j["direct_candidates"] = r.direct_candidates;
  j["culprits"] = r.culprits;
  j["effects"] = nlohmann::json::array();
  for (const auto& e : r.effects)
    j["effects"].push_back({{"name", e.name},
                            {"alone_restores", e.alone_restores},
                            {"alone", e.alone},
                            {"reenabled_breaks", e.reenabled_breaks},
                            {"reenabled", e.reenabled}});
  j["fused"] = nlohmann::json::array();
  for (const auto& f : r.fused) j["fused"].push_back({{"node", f.node}, {"replaced", f.replaced}});
  j["removed"] = r.removed;
  j["first_divergent_node"] =
      r.first_divergent_node.empty()
          ? nlohmann::json(nullptr)
          : nlohmann::json{{"node", r.first_divergent_node}, {"detail", r.first_divergent_detail}};
  j["trials"] = nlohmann::json::array();
  for (const auto& t : r.trials)
    j["trials"].push_back(
        {{"disabled", t.disabled}, {"agrees", t.agrees}, {"line", t.line}, {"applied", t.applied}});
  j["sessions"] = {{"confirm", r.confirm_sessions}, {"search", r.search_sessions},
                   {"checks", r.check_sessions},    {"models", r.model_sessions},
                   {"bound", r.session_bound},      {"k", r.search_found}};
  j["seconds"] = r.seconds;
  j["optimized_models"] = {{"with", r.optimized_with.string()},
                           {"without", r.optimized_without.string()}};
  j["verdict_line"] = r.verdict_line;
  return j;
}

report::ViewerOverlays bisect_overlays(const BisectOptimizersResult& r) {
  report::ViewerOverlays ov;
  std::vector<std::string> nodes;
  auto original = [](const std::string& label) { return !label.empty() && label[0] == '#'; };
  for (const auto& f : r.fused)
    for (const auto& n : f.replaced)
      if (original(n)) nodes.push_back(n);
  for (const auto& n : r.removed)
    if (original(n)) nodes.push_back(n);
  if (!r.first_divergent_node.empty()) nodes.push_back(r.first_divergent_node);
  if (nodes.empty()) return ov;
  ov.highlight = report::HighlightOverlay{
      "culprits' nodes",
      fmt::format("nodes {} fused or removed{}", fmt::join(r.culprits, " + "),
                  r.first_divergent_node.empty()
                      ? std::string()
                      : "; the first divergent: " + r.first_divergent_node),
      nodes};
  return ov;
}

void print_text(const BisectOptimizersResult& r, std::ostream& os) {
  os << "model: " << r.model << "\n";
  os << "compared: " << r.difference << "\n";
  if (r.outcome != BisectOutcome::kNoDifference) {
    const auto direct = r.candidates.begin() + static_cast<std::ptrdiff_t>(r.direct_candidates);
    os << "\ngraph transformers that changed the model (ONNX Runtime's log): "
       << (r.direct_candidates == 0
               ? std::string("none")
               : fmt::format("{}", fmt::join(r.candidates.begin(), direct, ", ")))
       << "\n";
    if (direct != r.candidates.end())
      os << "  and once those were disabled, or set by --backend: "
         << fmt::format("{}", fmt::join(direct, r.candidates.end(), ", ")) << "\n";
  }
  if (r.outcome == BisectOutcome::kFound) print_culprits(r, os);
  if (r.search_sessions > 0)
    os << fmt::format(
        "\nsessions: {} to compare, {} to bisect (2 k log2(N) + 2 = {:.1f} for k={} among "
        "N={}), {} to check the culprits, {} for the optimized models; {:.1f} s\n",
        r.confirm_sessions, r.search_sessions, r.session_bound, r.search_found, r.candidates.size(),
        r.check_sessions, r.model_sessions, r.seconds);
  os << "\n"
     << (r.outcome == BisectOutcome::kNoDifference ? "AGREE: "
         : r.outcome == BisectOutcome::kFound      ? "FOUND: "
                                                   : "NOT FOUND: ")
     << r.verdict_line << "\n";
}

}  // namespace onnxdbg::api
