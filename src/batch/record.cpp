// Job records and the report folder's cache.
#include "batch/record.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "core/atomic_file.h"
#include "core/subprocess.h"

namespace onnxdbg::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// The last line of stderr that says something, without onnxdbg's prefix.
std::string last_error_line(const fs::path& stderr_file) {
  std::string last = last_line(read_file_head(stderr_file, size_t{1} << 20), std::string::npos);
  for (const char* prefix : {"onnxdbg: error: ", "onnxdbg: "})
    if (last.rfind(prefix, 0) == 0) return last.substr(std::strlen(prefix));
  return last;
}

json run_details(const json& out, std::string& line) {
  json d{{"verdict", out.value("verdict", "")}};
  line = out.value("verdict_line", "");
  const json& f = out.contains("first_divergent_node") ? out["first_divergent_node"] : json();
  if (f.is_object())  // the answer: where it starts (the verdict line is in output.json)
    line = fmt::format("first divergent node {} on {}", f.value("label", f.value("node", "")),
                       f.value("backend", ""));
  d["first_divergent_node"] =
      f.is_object() ? json{{"node", f.value("node", "")},
                           {"op_type", f.value("op_type", "")},
                           {"backend", f.value("backend", "")},
                           {"own_error", f.contains("own_error") ? f["own_error"] : json()}}
                    : json();
  json errors = json::array();
  if (out.contains("backends") && out["backends"].is_array())
    for (const auto& b : out["backends"])
      if (b.is_object() && b.value("status", "ok") != "ok")
        errors.push_back(
            {{"backend", b.value("name", "")},
             {"stage", b.contains("failed_stage") && b["failed_stage"].is_string()
                           ? b["failed_stage"].get<std::string>()
                           : ""},
             {"error",
              b.contains("error") && b["error"].is_string() ? b["error"].get<std::string>() : ""}});
  d["backend_errors"] = std::move(errors);
  return d;
}

json lint_details(const json& out, std::string& line) {
  const json c =
      out.contains("counts") && out["counts"].is_object() ? out["counts"] : json::object();
  const int errors = c.value("error", 0), warnings = c.value("warning", 0);
  line = fmt::format("{} error{}, {} warning{}", errors, errors == 1 ? "" : "s", warnings,
                     warnings == 1 ? "" : "s");
  if (out.contains("findings") && out["findings"].is_array())
    for (const auto& f : out["findings"])
      if (f.is_object() && f.value("severity", "") == "error") {
        line += fmt::format(": {}", f.value("message", ""));
        break;
      }
  return {{"errors", errors}, {"warnings", warnings}};
}

json reduce_details(const json& out, std::string& line) {
  line =
      fmt::format("{} of {} nodes kept", out.value("nodes_after", 0), out.value("nodes_before", 0));
  return {{"nodes_before", out.value("nodes_before", 0)},
          {"nodes_after", out.value("nodes_after", 0)},
          {"kept_op_types", out.contains("kept_op_types") ? out["kept_op_types"] : json::array()}};
}

json bisect_details(const json& out, std::string& line) {
  const json culprits = out.contains("culprits") ? out["culprits"] : json::array();
  line = fmt::format("{}{}{}", out.value("outcome", ""), culprits.empty() ? "" : ": ",
                     culprits.is_array() && !culprits.empty() ? culprits.dump() : "");
  return {{"outcome", out.value("outcome", "")}, {"culprits", culprits}};
}

/// The command's --json reduced to what the summary shows; sets `line`.
json details_of(std::string_view command, const json& out, std::string& line) {
  if (!out.is_object()) return nullptr;
  if (out.contains("error") && out["error"].is_object()) {
    line = out["error"].value("message", "");
    return {{"error", out["error"]}};
  }
  if (command == "run") return run_details(out, line);
  if (command == "lint") return lint_details(out, line);
  if (command == "reduce") return reduce_details(out, line);
  if (command == "bisect-optimizers") return bisect_details(out, line);
  return nullptr;
}

std::string status_of(const JobOutcome& o) {
  if (o.timed_out) return "timeout";
  if (o.signal != 0) return "crashed";
  if (!o.lost.empty()) return o.exit_code == -2 ? "error" : "crashed";
  if (o.exit_code == 0) return "pass";
  if (o.exit_code == 1) return "fail";
  return "error";
}

}  // namespace

json job_record(const JobOutcome& o, std::string_view output, const fs::path& staging,
                std::string_view command, double timeout, int attempts) {
  json rec{{"status", status_of(o)}, {"exit_code", o.exit_code}, {"seconds", o.seconds},
           {"attempts", attempts},   {"page", nullptr},          {"details", nullptr},
           {"cause", nullptr}};
  std::string line;
  const json out = json::parse(output.substr(0, size_t{256} << 20), nullptr, false);
  if (!out.is_discarded()) rec["details"] = details_of(command, out, line);
  std::error_code ec;
  if (fs::is_regular_file(staging / "page.html", ec)) rec["page"] = "page.html";
  const std::string status = rec["status"];
  std::string cause;
  if (status == "timeout") {
    cause = fmt::format("ran past --timeout {} s and was killed", timeout);
  } else if (o.signal != 0) {
    const char* name = sigabbrev_np(o.signal);
    cause = fmt::format("onnxdbg was killed by signal {} (SIG{}){}", o.signal, name ? name : "?",
                        attempts > 1 ? fmt::format(", {} times", attempts) : "");
  } else if (!o.lost.empty()) {
    cause = o.lost;
  }
  if (!cause.empty()) {
    rec["cause"] = cause;
    line = cause;
  }
  if (line.empty()) line = last_error_line(staging / "stderr.txt");
  if (line.empty() && status == "error") line = fmt::format("exit status {}", o.exit_code);
  rec["line"] = line;
  return rec;
}

bool is_final(const json& record) {
  const std::string s = record.value("status", "");
  return s == "pass" || s == "fail" || s == "error";
}

Expected<fs::path> make_staging(const fs::path& report_dir, const std::string& key) {
  static std::atomic<unsigned> counter{0};
  const fs::path dir =
      report_dir / ".staging" / fmt::format("{}.{}.{}", key, getpid(), counter.fetch_add(1));
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec)
    return invalid_argument(fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
  return dir;
}

Status commit_job(const fs::path& report_dir, const std::string& key, const fs::path& staging,
                  const json& record, std::string output) {
  std::error_code ec;
  const fs::path jobs = report_dir / "jobs";
  fs::create_directories(jobs, ec);
  const fs::path target = jobs / key;
  // The command's JSON becomes output.json, naming the files it wrote where they will be.
  if (fs::exists(staging / "stdout.json", ec)) {
    const std::string from = staging.string(), to = target.string();
    for (size_t at = 0; (at = output.find(from, at)) != std::string::npos; at += to.size())
      output.replace(at, from.size(), to);
    ODB_RETURN_IF_ERROR(write_file_atomic(staging / "output.json", output));
    fs::remove(staging / "stdout.json", ec);
  }
  ODB_RETURN_IF_ERROR(write_file_atomic(staging / "record.json", record.dump(2) + "\n"));
  if (fs::exists(target, ec)) {
    // The older record goes aside first; a reader between the renames finds no record, never half.
    const fs::path old = staging.string() + ".old";
    fs::rename(target, old, ec);
    fs::remove_all(old, ec);
  }
  fs::rename(staging, target, ec);
  if (ec && fs::exists(target / "record.json")) {
    fs::remove_all(staging, ec);  // a second batch wrote the same job at the same moment
    return Status::ok();
  }
  if (ec)
    return invalid_argument(fmt::format("cannot move the result of job {} into '{}': {}", key,
                                        target.string(), ec.message()));
  return Status::ok();
}

std::optional<json> cached_record(const fs::path& report_dir, const std::string& key) {
  const fs::path p = report_dir / "jobs" / key / "record.json";
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  json j = json::parse(read_file_head(p, size_t{64} << 20), nullptr, false);
  if (!j.is_object() || !j.contains("status")) return std::nullopt;
  return j;
}

}  // namespace onnxdbg::batch
