// The fleet views and index.html of a batch.
#include "batch/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "batch/record.h"

namespace onnxdbg::batch {

using nlohmann::json;

namespace {

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

/// Groups of models by a key, most models first, then by key.
struct Groups {
  std::map<std::vector<std::string>, std::set<std::string>> models;
  std::map<std::vector<std::string>, std::string> example;

  json to_json(const std::vector<std::string>& names) const {
    std::vector<std::pair<std::vector<std::string>, const std::set<std::string>*>> v;
    for (const auto& [k, m] : models) v.emplace_back(k, &m);
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.second->size() > b.second->size();
    });
    json out = json::array();
    for (const auto& [k, m] : v) {
      json row;
      for (size_t i = 0; i < names.size(); ++i) row[names[i]] = k[i];
      row["models"] = json(std::vector<std::string>(m->begin(), m->end()));
      if (auto it = example.find(k); it != example.end()) row["example"] = it->second;
      out.push_back(std::move(row));
    }
    return out;
  }
};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string cut(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n) + "...";
  return s;
}

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 24px}th,td{border:1px solid #ddd;padding:4px 8px;
vertical-align:top;text-align:left}th{background:#f4f4f4}.pass{color:#1a7f37}.fail{color:#b35900}
.error,.crashed,.timeout{color:#c62828}.st{font-weight:600}.line{color:#555;font-size:12px;
max-width:42em}.t{color:#888;font-size:12px}code{font-size:12px}
)";

std::string job_cell(const json& j) {
  const std::string status = str(j, "status");
  std::string page = str(j, "page");
  std::string cell = fmt::format("<span class=\"st {}\">{}</span>", esc(status), esc(status));
  if (j.value("cached", false)) cell += " <span class=\"t\">(cached)</span>";
  cell += fmt::format(" <span class=\"t\">{:.1f} s</span>", j.value("seconds", 0.0));
  if (!page.empty()) cell += fmt::format(" <a href=\"{}\">page</a>", esc(page));
  cell += fmt::format("<div class=\"line\">{}</div>", esc(cut(str(j, "line"), 300)));
  return cell;
}

std::string models_table(const json& jobs) {
  std::vector<std::string> models, commands;
  std::map<std::pair<std::string, std::string>, const json*> cells;
  for (const auto& j : jobs) {
    const std::string m = str(j, "model"), c = str(j, "command");
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
    if (std::find(commands.begin(), commands.end(), c) == commands.end()) commands.push_back(c);
    cells[{m, c}] = &j;
  }
  std::string h = "<table><tr><th>model</th>";
  for (const auto& c : commands) h += fmt::format("<th><code>{}</code></th>", esc(c));
  h += "</tr>\n";
  for (const auto& m : models) {
    h += fmt::format("<tr><td><code>{}</code></td>", esc(m));
    for (const auto& c : commands) {
      auto it = cells.find({m, c});
      h += "<td>" + (it == cells.end() ? std::string() : job_cell(*it->second)) + "</td>";
    }
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

std::string fleet_table(const json& rows, const std::vector<std::string>& columns,
                        const std::string& title, const std::string& empty) {
  std::string h = fmt::format("<h2>{}</h2>\n", esc(title));
  if (!rows.is_array() || rows.empty()) return h + fmt::format("<p>{}</p>\n", esc(empty));
  h += "<table><tr>";
  for (const auto& c : columns) h += fmt::format("<th>{}</th>", esc(c));
  h += "</tr>\n";
  for (const auto& r : rows) {
    h += "<tr>";
    for (const auto& c : columns) {
      std::string v;
      if (!r.contains(c))
        v = "";
      else if (r[c].is_string())
        v = r[c].get<std::string>();
      else if (r[c].is_array()) {
        for (const auto& m : r[c])
          v += (v.empty() ? "" : ", ") + (m.is_string() ? m.get<std::string>() : m.dump());
      } else if (r[c].is_number_float())
        v = fmt::format("{:.1f}", r[c].get<double>());
      else
        v = r[c].dump();
      h += fmt::format("<td>{}</td>", esc(cut(v, 400)));
    }
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

}  // namespace

json fleet_json(const json& jobs) {
  Groups ops, backends;
  json slowest = json::array(), crashes = json::array();
  std::vector<const json*> by_time;
  for (const auto& j : jobs) {
    const std::string model = str(j, "model");
    const json& d = j.contains("details") ? j["details"] : json();
    const json& f =
        d.is_object() && d.contains("first_divergent_node") ? d["first_divergent_node"] : json();
    if (f.is_object()) ops.models[{str(f, "op_type"), str(f, "backend")}].insert(model);
    if (d.is_object() && d.contains("backend_errors") && d["backend_errors"].is_array())
      for (const auto& e : d["backend_errors"]) {
        const std::vector<std::string> k{str(e, "backend"), str(e, "stage")};
        backends.models[k].insert(model);
        backends.example.emplace(k, cut(str(e, "error"), 300));
      }
    const std::string status = str(j, "status");
    if (status == "crashed" || status == "timeout")
      crashes.push_back({{"model", model},
                         {"command", str(j, "command")},
                         {"status", status},
                         {"cause", str(j, "line")}});
    by_time.push_back(&j);
  }
  std::stable_sort(by_time.begin(), by_time.end(), [](const json* a, const json* b) {
    return a->value("seconds", 0.0) > b->value("seconds", 0.0);
  });
  for (size_t i = 0; i < by_time.size() && i < 10; ++i)
    slowest.push_back({{"model", str(*by_time[i], "model")},
                       {"command", str(*by_time[i], "command")},
                       {"seconds", by_time[i]->value("seconds", 0.0)}});
  return {{"op_types", ops.to_json({"op_type", "backend"})},
          {"backend_errors", backends.to_json({"backend", "stage"})},
          {"slowest", std::move(slowest)},
          {"crashes", std::move(crashes)}};
}

std::string index_html(const json& summary) {
  const json& jobs = summary.contains("jobs") ? summary["jobs"] : json::array();
  const json& fleet = summary.contains("fleet") ? summary["fleet"] : json::object();
  std::string counts;
  const json& c = summary.contains("counts") ? summary["counts"] : json::object();
  for (std::string_view k : kJobStatuses)
    if (c.contains(k))
      counts += fmt::format("<span class=\"st {}\">{} {}</span> &nbsp; ", k, c[k].dump(), k);
  std::string h = fmt::format(
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>onnxdbg batch</title>"
      "<style>{}</style></head><body>\n<h1>onnxdbg batch</h1>\n<p>{} jobs on {} models, executor "
      "{}, {:.1f} s, onnxdbg {}</p>\n<p>{}</p>\n",
      kStyle, jobs.size(), summary.value("models", 0), esc(str(summary, "executor")),
      summary.value("seconds", 0.0), esc(str(summary, "onnxdbg_version")), counts);
  h += models_table(jobs);
  h += fleet_table(fleet.value("op_types", json::array()), {"op_type", "backend", "models"},
                   "First divergent op types by backend", "No run found a divergent node.");
  h += fleet_table(fleet.value("backend_errors", json::array()),
                   {"backend", "stage", "models", "example"}, "Backends that failed",
                   "Every backend loaded and ran every model.");
  h += fleet_table(fleet.value("crashes", json::array()), {"model", "command", "status", "cause"},
                   "Crashes and timeouts", "No job crashed or timed out.");
  h += fleet_table(fleet.value("slowest", json::array()), {"model", "command", "seconds"},
                   "Slowest jobs", "No job ran.");
  return h + "</body></html>\n";
}

}  // namespace onnxdbg::batch
