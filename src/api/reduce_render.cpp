// The renderings of an api::ReduceResult: the JSON of `onnxdbg reduce --json`, the summary text
// and the viewer overlay that highlights the reduced nodes in the original model.
#include <cstdio>

#include "onnxdbg/reduce.h"
#include "reduce/reduce.h"
#include "report/table.h"

namespace onnxdbg::api {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? std::string("none") : s;
}

/// "reduced 400 -> 3 nodes in 2 passes: #3 Conv 'a', #4 Relu 'b', ..." (twelve nodes at most).
void print_kept(const reduce::ReduceReport& rep, std::ostream& os) {
  std::string kept;
  for (size_t i = 0; i < rep.kept_nodes.size() && i < 12; ++i)
    kept += (i ? ", " : "") + rep.kept_nodes[i];
  if (rep.kept_nodes.size() > 12) kept += ", ...";
  os << "reduced " << rep.nodes_before << " -> " << rep.nodes_after
     << (rep.nodes_after == 1 ? " node" : " nodes") << " in " << rep.passes
     << (rep.passes == 1 ? " pass" : " passes") << ": " << kept << "\n";
  os << "  inputs: " << join(rep.inputs) << "; outputs: " << join(rep.outputs) << "\n";
  // Where the oracle calls went: the original, valid candidates, the confirmation; and what
  // never reached the oracle (cache hits, invalid candidates with their reasons).
  std::string reasons;
  for (const auto& [reason, n] : rep.invalid_reasons)
    reasons += (reasons.empty() ? " (" : ", ") + reason + " " + std::to_string(n);
  if (!reasons.empty()) reasons += ")";
  int64_t tested = 0;
  for (const auto& st : rep.strategies) tested += st.oracle_calls;
  char line[512];
  std::snprintf(line, sizeof line,
                "  %lld oracle calls (%lld candidates, the original and the confirmation), %lld "
                "cache hits, %lld invalid candidates skipped%s, %lld failed differently, %lld "
                "timeouts, %.2f s\n",
                static_cast<long long>(rep.oracle_calls), static_cast<long long>(tested),
                static_cast<long long>(rep.cache_hits), static_cast<long long>(rep.invalid_skipped),
                reasons.c_str(), static_cast<long long>(rep.failed_differently),
                static_cast<long long>(rep.timeouts), rep.seconds);
  os << line;
}

void print_strategies(const reduce::ReduceReport& rep, std::ostream& os) {
  report::Table t({"strategy", "runs", "oracle calls", "nodes removed", "seconds"},
                  {report::Align::kLeft, report::Align::kRight, report::Align::kRight,
                   report::Align::kRight, report::Align::kRight});
  for (const auto& s : rep.strategies) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.2f", s.seconds);
    t.add_row({s.name, std::to_string(s.runs), std::to_string(s.oracle_calls),
               std::to_string(s.nodes_removed), secs});
  }
  t.print(os);
}

}  // namespace

nlohmann::json to_json(const ReduceResult& r) {
  return r.report ? reduce::report_json(*r.report) : nlohmann::json(nullptr);
}

void print_text(const ReduceResult& r, std::ostream& os) {
  if (!r.report) return;
  const reduce::ReduceReport& rep = *r.report;
  if (!rep.original_fails) {
    os << "the original model does not fail (" << rep.original_detail
       << "), so there is nothing to reduce; check the oracle options\n";
    return;
  }
  os << "the original model fails: " << rep.original_detail << "\n";
  print_kept(rep, os);
  print_strategies(rep, os);
  for (const auto& note : rep.notes) os << "note: " << note << "\n";
  if (rep.flaky)
    os << "warning: the reduced model passed when tested again: the oracle is flaky, so the "
          "result may not fail reliably\n";
  os << "wrote " << rep.output;
  if (!rep.min_good.empty())
    os << "; min-good (" << rep.min_good_nodes << (rep.min_good_nodes == 1 ? " node" : " nodes")
       << ", passes): " << rep.min_good;
  os << "\n" << std::flush;
}

report::ViewerOverlays reduce_overlays(const ReduceResult& r) {
  report::ViewerOverlays ov;
  if (!r.report) return ov;
  const reduce::ReduceReport& rep = *r.report;
  ov.highlight = report::HighlightOverlay{"reduced model",
                                          std::to_string(rep.nodes_after) + " of " +
                                              std::to_string(rep.nodes_before) +
                                              " nodes still fail (" + r.oracle + ")",
                                          rep.kept_nodes};
  return ov;
}

}  // namespace onnxdbg::api
