// Terminal and JSON rendering of `onnxdbg run` results.
#include "report/run_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "compare/error_text.h"
#include "model/graph.h"
#include "report/table.h"

namespace onnxdbg::report {

namespace {
std::string seconds(double s) {
  char buf[32];
  if (s < 0.001)
    std::snprintf(buf, sizeof buf, "%.0f us", s * 1e6);
  else if (s < 1)
    std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}
}  // namespace

void add_step_fields(nlohmann::json& j, const TensorComparison& r) {
  const bool stepped = r.step_dtype != DType::kUndefined;
  j["step_dtype"] = stepped ? nlohmann::json(dtype_name(r.step_dtype)) : nlohmann::json(nullptr);
  j["max_error_steps"] = stepped ? json_number(r.max_error_steps) : nlohmann::json(nullptr);
  // A quantized tensor's scale and its error in dequantized units (null when not quantized).
  const bool quantized = r.quant_scale > 0;
  j["quant_scale"] = quantized ? json_number(r.quant_scale) : nlohmann::json(nullptr);
  j["max_dequantized_error"] =
      quantized ? json_number(r.max_abs_error * r.quant_scale) : nlohmann::json(nullptr);
}

nlohmann::json json_number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

void print_run_report(const CompareRunReport& rep, std::ostream& os, bool color) {
  os << "model: " << rep.model << "\n";
  print_run_tables(rep, os, color);
  print_verdict(rep.verdict, rep.verdict_line, os, color);
}

void print_verdict(Verdict verdict, const std::string& line, std::ostream& os, bool color,
                   const std::string& prefix) {
  const std::string tag = verdict_name(verdict);
  const std::string col = verdict == Verdict::kAgree ? "green" : "red";
  os << "\n"
     << prefix
     << colorize(tag == "agree"      ? "AGREE"
                 : tag == "disagree" ? "DISAGREE"
                                     : "ERROR",
                 col, color)
     << ": " << line << "\n";
}

namespace {

// "CPUExecutionProvider (238 nodes)", and the providers asked for when some nodes ran elsewhere.
std::string providers_text(const BackendRun& b, bool color) {
  std::string providers;
  for (const auto& p : b.info.providers) {
    providers += (providers.empty() ? "" : ",") + p;
    if (auto it = b.info.provider_node_counts.find(p); it != b.info.provider_node_counts.end())
      providers += " (" + std::to_string(it->second) + (it->second == 1 ? " node)" : " nodes)");
  }
  if (!b.info.provider_warnings.empty()) {
    std::string asked;
    for (const auto& p : b.info.providers_requested)
      asked += (asked.empty() ? "" : "+") + provider_short_name(p);
    providers += "; " + colorize("requested " + asked, "yellow", color);
  }
  return providers;
}

// One row per backend (status, load and run times, providers or error), the warnings of those
// that ran, and which nodes ran where when that is news (several providers, or not the ones
// asked).
void print_backends(const CompareRunReport& rep, std::ostream& os, bool color) {
  os << "\nbackends:\n";
  Table bt({"backend", "status", "load", "run", "providers / error"},
           {Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kLeft});
  for (const auto& b : rep.backends) {
    if (b.ok) {
      bt.add_row({b.spec.to_string(), colorize("ok", "green", color),
                  b.session_reused ? "reused" : seconds(b.info.load_seconds),
                  seconds(b.run_seconds), providers_text(b, color)});
    } else {
      bt.add_row({b.spec.to_string(), colorize("failed (" + b.failed_stage + ")", "red", color),
                  b.failed_stage != "run" ? "-"
                  : b.session_reused      ? "reused"
                                          : seconds(b.info.load_seconds),
                  "-", b.error});
    }
  }
  bt.print(os);
  // Warnings of a failed backend usually restate its error; the JSON keeps them all.
  for (const auto& b : rep.backends)
    if (b.ok)
      for (const auto& w : b.info.warnings)
        os << "  warning (" << b.spec.to_string() << "): " << w << "\n";
  for (const auto& b : rep.backends) {
    if (b.info.node_placement.empty() ||
        (b.info.provider_node_counts.size() < 2 && b.info.provider_warnings.empty()))
      continue;
    os << "  nodes by provider (" << b.spec.to_string() << "):\n";
    for (const auto& provider : b.info.providers) {
      std::map<std::string, int64_t> by_op;
      int64_t n = 0;
      for (const auto& p : b.info.node_placement)
        if (p.provider == provider) ++by_op[p.op_type], ++n;
      std::string ops;
      for (const auto& [op, count] : by_op)
        ops += (ops.empty() ? "" : ", ") + op + " " + std::to_string(count);
      os << "    " << provider << ": " << n << (n == 1 ? " node" : " nodes") << " (" << ops
         << ")\n";
    }
  }
}

// One table per output: each backend's errors against the golden backend.
void print_output_tables(const CompareRunReport& rep, std::ostream& os, bool color) {
  std::vector<std::string> outputs;
  std::set<std::string> seen;
  for (const auto& c : rep.comparisons)
    if (seen.insert(c.output).second) outputs.push_back(c.output);
  for (const auto& out : outputs) {
    std::string against;
    for (const auto& c : rep.comparisons)
      if (c.output == out) against = c.against;
    os << "\noutput '" << out << "' against " << against << ":\n";
    Table t(
        {"backend", "shape", "max abs err", "max rel err", "mismatches", "result"},
        {Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kLeft});
    for (const auto& c : rep.comparisons) {
      if (c.output != out) continue;
      const auto& r = c.result;
      std::string result =
          r.pass ? colorize("pass", "green", color) : colorize("FAIL", "red", color);
      if (!r.pass && r.worst_index < 0 && !r.reason.empty()) result += " (" + r.reason + ")";
      t.add_row({c.backend, shape_to_string(r.shape), max_abs_error_text(r),
                 short_number(r.max_rel_error),
                 std::to_string(r.mismatches) + " / " + std::to_string(r.numel), result});
    }
    t.print(os);
  }
}

// The float16 overflow points and the NaN/Inf validation.
void print_checks(const CompareRunReport& rep, std::ostream& os) {
  if (!rep.fp16_overflows.empty()) {
    os << "\nfloat16 overflow points (float32 reference values beyond 65504, inf in float16):\n";
    Table t({"node", "tensor", "max |value|"}, {Align::kLeft, Align::kLeft, Align::kRight});
    for (const auto& o : rep.fp16_overflows)
      t.add_row({node_label(o.node, o.op_type, static_cast<int64_t>(o.node_index)), o.tensor,
                 short_number(o.max_abs)});
    t.print(os);
  } else if (!rep.fp16_check_error.empty()) {
    os << "\nfloat16 overflow points: not computed: " << rep.fp16_check_error << "\n";
  }
  if (!rep.validation.empty()) {
    os << "\nvalidation (NaN/Inf):\n";
    for (const auto& v : rep.validation)
      os << "  " << v.backend << " output '" << v.output << "': " << v.count << " of " << v.numel
         << " values are NaN or Inf\n";
  } else if (rep.validated) {
    os << "\nvalidation: no NaN or Inf in any output\n";
  }
}

}  // namespace

void print_run_tables(const CompareRunReport& rep, std::ostream& os, bool color) {
  if (!rep.inputs.empty()) {
    os << "inputs:";
    for (const auto& [name, t] : rep.inputs)
      os << "  " << name << " " << dtype_name(t.dtype()) << "[" << shape_to_string(t.shape())
         << "]";
    os << "\n";
  }
  print_backends(rep, os, color);
  print_output_tables(rep, os, color);
  print_checks(rep, os);
}

namespace {

nlohmann::json backend_json(const BackendRun& b) {
  using nlohmann::json;
  json jb;
  jb["name"] = b.spec.name;
  jb["options"] = b.spec.options;
  jb["spec"] = b.spec.to_string();
  jb["description"] = b.description;
  jb["status"] = b.ok ? "ok" : "failed";
  jb["error"] = b.ok ? json(nullptr) : json(b.error);
  jb["failed_stage"] = b.ok ? json(nullptr) : json(b.failed_stage);
  jb["load_seconds"] = b.failed_stage == "create" || b.failed_stage == "load"
                           ? json(nullptr)
                           : json(b.info.load_seconds);
  jb["run_seconds"] = b.ok ? json(b.run_seconds) : json(nullptr);
  jb["peak_rss_bytes"] = b.peak_rss_bytes > 0 ? json(b.peak_rss_bytes) : json(nullptr);
  jb["providers"] = b.info.providers;
  jb["warnings"] = b.info.warnings;
  jb["providers_requested"] = b.info.providers_requested;
  jb["providers_used"] = b.info.providers;
  jb["provider_node_counts"] = b.info.provider_node_counts;
  jb["provider_warnings"] = b.info.provider_warnings;
  if (!b.info.transformers_applied.empty())
    jb["transformers_applied"] = b.info.transformers_applied;
  jb["node_providers"] = json::array();
  for (const auto& p : b.info.node_placement)
    jb["node_providers"].push_back(
        {{"node", p.node}, {"op_type", p.op_type}, {"provider", p.provider}});
  return jb;
}

}  // namespace

nlohmann::json run_report_json(const CompareRunReport& rep) {
  using nlohmann::json;
  json j;
  j["verdict"] = verdict_name(rep.verdict);
  j["verdict_line"] = rep.verdict_line;
  j["model"] = rep.model;
  j["error_stat"] = error_stat_name(rep.error_stat);
  j["inputs"] = json::array();
  for (const auto& [name, t] : rep.inputs)
    j["inputs"].push_back({{"name", name}, {"dtype", dtype_name(t.dtype())}, {"shape", t.shape()}});
  j["backends"] = json::array();
  for (const auto& b : rep.backends) j["backends"].push_back(backend_json(b));
  j["comparisons"] = json::array();
  for (const auto& c : rep.comparisons) {
    const auto& r = c.result;
    j["comparisons"].push_back({{"output", c.output},
                                {"backend", c.backend},
                                {"against", c.against},
                                {"shape", r.shape},
                                {"atol", c.tol.atol},
                                {"rtol", c.tol.rtol},
                                {"max_abs_error", json_number(r.max_abs_error)},
                                {"max_rel_error", json_number(r.max_rel_error)},
                                {"mean_abs_error", json_number(r.mean_abs_error)},
                                {"mismatches", r.mismatches},
                                {"elements", r.numel},
                                {"nan_or_inf", r.nan_or_inf_actual},
                                {"pass", r.pass},
                                {"reason", r.reason}});
    add_step_fields(j["comparisons"].back(), r);
  }
  j["fp16_overflows"] = json::array();
  for (const auto& o : rep.fp16_overflows)
    j["fp16_overflows"].push_back({{"tensor", o.tensor},
                                   {"node", o.node},
                                   {"op_type", o.op_type},
                                   {"node_index", o.node_index},
                                   {"max_abs", o.max_abs}});
  j["validation"] = json::array();
  for (const auto& v : rep.validation)
    j["validation"].push_back({{"backend", v.backend},
                               {"output", v.output},
                               {"nan_or_inf", v.count},
                               {"elements", v.numel}});
  return j;
}

nlohmann::json run_samples_json(const SamplesRunReport& rep) {
  using nlohmann::json;
  if (rep.samples.size() == 1) return run_report_json(rep.samples.front());
  json j;
  j["verdict"] = verdict_name(rep.verdict);
  j["verdict_line"] = rep.verdict_line;
  const CompareRunReport& first = rep.samples.front();
  j["model"] = first.model;
  j["error_stat"] = error_stat_name(first.error_stat);
  j["inputs"] = json::array();
  for (const auto& [name, t] : first.inputs)
    j["inputs"].push_back({{"name", name}, {"dtype", dtype_name(t.dtype())}, {"shape", t.shape()}});
  // Each backend once, as loaded: failed when it failed on any sample (that sample's stage and
  // error), with the samples it failed on; run_seconds is the mean over the samples it ran.
  j["backends"] = json::array();
  for (size_t b = 0; b < first.backends.size(); ++b) {
    const BackendRun* shown = &first.backends[b];
    std::vector<size_t> failed;
    double run_sum = 0;
    int64_t peak = 0;
    for (size_t i = 0; i < rep.samples.size(); ++i) {
      const BackendRun& r = rep.samples[i].backends[b];
      peak = std::max(peak, r.peak_rss_bytes);
      if (r.ok) {
        run_sum += r.run_seconds;
        continue;
      }
      if (failed.empty()) shown = &r;
      failed.push_back(i);
    }
    json jb = backend_json(*shown);
    if (!failed.empty())
      jb["error"] = "sample " + std::to_string(failed.front()) + ": " + shown->error;
    const size_t ran = rep.samples.size() - failed.size();
    jb["run_seconds"] = failed.empty() ? json(run_sum / static_cast<double>(ran)) : json(nullptr);
    jb["failed_samples"] = failed;
    jb["peak_rss_bytes"] = peak > 0 ? json(peak) : json(nullptr);
    j["backends"].push_back(std::move(jb));
  }
  j["comparisons"] = json::array();
  j["fp16_overflows"] = json::array();
  j["validation"] = json::array();
  j["sample_count"] = rep.samples.size();
  j["failing_samples"] = rep.failing;
  j["samples"] = json::array();
  for (size_t i = 0; i < rep.samples.size(); ++i) {
    json s = run_report_json(rep.samples[i]);
    s.erase("model");
    s.erase("error_stat");
    for (size_t b = 0; b < rep.samples[i].backends.size(); ++b)
      s["backends"][b]["session_reused"] = rep.samples[i].backends[b].session_reused;
    json out = {{"sample", i}};
    out.update(s);
    j["samples"].push_back(std::move(out));
  }
  return j;
}

}  // namespace onnxdbg::report
