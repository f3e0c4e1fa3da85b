// The three renderings of an api::RunResult: the JSON of `onnxdbg run --json`, the text tables
// and verdict of `onnxdbg run`, and the HTML view. All read the same result, so they cannot
// disagree.
#include "onnxdbg/run.h"
#include "report/layerwise_report.h"
#include "report/run_report.h"
#include "report/table.h"
#include "report/viewer.h"

namespace onnxdbg::api {

namespace {

/// Several samples: the aggregate report, each sample's seed, layerwise keys per sample, and the
/// first sample's first divergent node at the top.
nlohmann::json samples_json(const RunResult& r) {
  nlohmann::json j = report::run_samples_json(r.report);
  const bool layered = !r.layers.empty();
  if (layered) j["first_divergent_node"] = nullptr;
  for (size_t i = 0; i < r.report.samples.size(); ++i) {
    nlohmann::json& js = j["samples"][i];
    js["seed"] = r.inputs_source.empty() ? nlohmann::json(r.seed + r.sample_ids[i])
                                         : nlohmann::json(nullptr);
    if (!layered) continue;
    if (r.layers[i].report) {
      report::add_layerwise_json(*r.layers[i].report, js);
    } else {
      js["layerwise_error"] = r.layers[i].error;
      js["first_divergent_node"] = nullptr;
    }
    if (js["first_divergent_node"].is_object() && j["first_divergent_node"].is_null()) {
      j["first_divergent_node"] = js["first_divergent_node"];
      j["first_divergent_node"]["sample"] = i;
    }
  }
  return j;
}

/// The text of several samples: a heading and the tables of each, then the verdict over all.
void print_samples_text(const RunResult& r, std::ostream& os, bool color) {
  const size_t n = r.report.samples.size();
  os << "model: " << r.source.string() << "\n";
  os << "samples: " << n << ", "
     << (r.inputs_source.empty()
             ? "generated with seeds " + std::to_string(r.seed) + " to " +
                   std::to_string(r.seed + n - 1) + " (--iterations " + std::to_string(n) + ")"
             : "from '" + r.inputs_source + "'")
     << "; each compared on its own\n";
  for (size_t i = 0; i < n; ++i) {
    std::string heading = "=== sample " + std::to_string(i) + " of " + std::to_string(n);
    if (r.inputs_source.empty()) heading += " (seed " + std::to_string(r.seed + i) + ")";
    os << "\n" << report::colorize(heading + " ===", "bold", color) << "\n";
    const CompareRunReport& s = r.report.samples[i];
    report::print_run_tables(s, os, color);
    report::print_verdict(s.verdict, s.verdict_line, os, color,
                          "sample " + std::to_string(i) + ": ");
    if (r.layers.empty()) continue;
    if (r.layers[i].report)
      report::print_layerwise_report(*r.layers[i].report, os, color);
    else
      os << "\nlayerwise: could not run on sample " << i << ": " << r.layers[i].error << "\n";
  }
  os << "\n"
     << report::colorize("=== all " + std::to_string(n) + " samples ===", "bold", color) << "\n";
  if (r.repro_sample)
    os << "first divergent node: on sample " << *r.repro_sample
       << " (repro: " << r.layers[*r.repro_sample].report->repro_dir.string() << ")\n";
  report::print_verdict(r.verdict(), r.verdict_line(), os, color);
}

/// "golden_mapping": what --golden-names suffix / --golden-layout did (GoldenMatchReport).
nlohmann::json golden_mapping_json(const GoldenMatchReport& m) {
  nlohmann::json renamed = nlohmann::json::array();
  for (const auto& [key, tensor] : m.renamed) renamed.push_back({{"key", key}, {"tensor", tensor}});
  nlohmann::json perms = nlohmann::json::array();
  for (const auto& p : m.permutations)
    perms.push_back({{"rank", p.rank}, {"perm", p.perm}, {"tensors", p.transposed}});
  return {{"names", std::string(golden_names_name(m.options.names))},
          {"layout", std::string(golden_layout_name(m.options.layout))},
          {"renamed", std::move(renamed)},
          {"dropped", m.dropped},
          {"transposed", std::move(perms)},
          {"ambiguous", m.ambiguous},
          {"unfit", m.unfit},
          {"reshaped", m.reshaped},
          {"unknown_shape", m.unknown_shape},
          {"notes", m.notes}};
}

}  // namespace

nlohmann::json to_json(const RunResult& r) {
  nlohmann::json j;
  if (r.report.samples.size() != 1) {
    j = samples_json(r);
  } else {
    j = report::run_samples_json(r.report);
    if (!r.layers.empty() && r.layers.front().report)
      report::add_layerwise_json(*r.layers.front().report, j);
  }
  // The verdict of the whole run (the layerwise pass's and a model problem included), as the
  // text's last line.
  j["verdict"] = verdict_name(r.verdict());
  j["verdict_line"] = r.verdict_line();
  if (r.golden_match) j["golden_mapping"] = golden_mapping_json(*r.golden_match);
  return j;
}

void print_text(const RunResult& r, std::ostream& os, bool color) {
  if (r.report.samples.size() != 1) return print_samples_text(r, os, color);
  const CompareRunReport& rep = r.report.samples.front();
  os << "model: " << rep.model << "\n";
  report::print_run_tables(rep, os, color);
  if (!r.layers.empty() && r.layers.front().report)
    report::print_layerwise_report(*r.layers.front().report, os, color);
  else if (!r.layers.empty() && !r.layers.front().error.empty())
    os << "\nlayerwise: could not run: " << r.layers.front().error << "\n";
  report::print_verdict(r.verdict(), r.verdict_line(), os, color);
}

report::ViewerOverlays run_overlays(const RunResult& r) {
  const size_t shown = r.shown_sample();
  const LayerwiseReport* lr =
      !r.layers.empty() && r.layers[shown].report ? &*r.layers[shown].report : nullptr;
  report::ViewerOverlays ov;
  nlohmann::json j = report::run_report_json(r.report.samples[shown]);
  if (lr) report::add_layerwise_json(*lr, j);
  // The verdict of the whole run, as the terminal's last line and --json give it (the sample's
  // own verdict leaves out the layerwise pass and a model problem).
  j["verdict"] = verdict_name(r.verdict());
  j["verdict_line"] = r.verdict_line();
  ov.run_report = std::move(j);
  return ov;
}

Status write_html(const RunResult& r, const std::filesystem::path& path) {
  return report::write_viewer_html(r.model.loaded(), run_overlays(r), path.string());
}

}  // namespace onnxdbg::api
