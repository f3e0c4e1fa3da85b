// api::batch: plans the jobs (batch/driver.h), runs them on the chosen executor, and writes the
// report (summary.json, index.html) from the records.
#include "onnxdbg/batch.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "batch/driver.h"
#include "batch/executor.h"
#include "batch/jobs.h"
#include "batch/record.h"
#include "batch/report.h"
#include "core/atomic_file.h"
#include "report/table.h"

namespace onnxdbg::api {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

BatchJob to_job(const batch::PlannedJob& p) {
  BatchJob j;
  j.model = p.model;
  j.model_sha256 = p.model_sha256;
  j.command = p.command;
  j.key = p.key;
  const json& r = p.record;
  j.status = r.value("status", "error");
  j.exit_code = r.contains("exit_code") && r["exit_code"].is_number_integer()
                    ? r["exit_code"].get<int>()
                    : -1;
  j.line = r.contains("line") && r["line"].is_string() ? r["line"].get<std::string>() : "";
  j.seconds = r.value("seconds", 0.0);
  j.attempts = p.cached ? 0 : p.attempts;
  j.cached = p.cached;
  if (r.contains("page") && r["page"].is_string() && !p.key.empty())
    j.page = "jobs/" + p.key + "/" + r["page"].get<std::string>();
  j.details = r.contains("details") ? r["details"] : json();
  return j;
}

Expected<std::vector<batch::Command>> parse_commands(const std::vector<std::string>& texts) {
  std::vector<batch::Command> out;
  std::set<std::string> seen;
  for (const auto& t : texts) {
    ODB_ASSIGN_OR_RETURN(batch::Command c, batch::parse_command(t));
    if (seen.insert(c.text).second) out.push_back(std::move(c));
  }
  return out;
}

Expected<std::unique_ptr<batch::Executor>> make_executor(const BatchOptions& o,
                                                         const std::string& exe, size_t jobs,
                                                         const fs::path& report_dir) {
  if (o.executor == "local") return batch::make_local_executor(jobs);
  return batch::connect_ray(o.address, o.python, exe, jobs, o.retries,
                            report_dir / "ray-executor.log");
}

Status check_options(const BatchOptions& o) {
  if (o.models.empty())
    return invalid_argument("batch needs at least one model, folder or list file");
  if (o.commands.empty())
    return invalid_argument(
        "batch needs at least one --command, such as --command \"run\" or --command lint");
  if (o.report_dir.empty()) return invalid_argument("batch needs a report folder: -o DIR");
  if (o.executor != "local" && o.executor != "ray")
    return invalid_argument(fmt::format("--executor {}: use local or ray", o.executor));
  if (o.jobs < 0)
    return invalid_argument(fmt::format("--jobs {}: give 1 or more (0: one per CPU)", o.jobs));
  if (o.timeout < 0)
    return invalid_argument(fmt::format("--timeout {}: give seconds, 0 for none", o.timeout));
  if (o.retries < 0)
    return invalid_argument(fmt::format("--retries {}: give 0 or more", o.retries));
  return Status::ok();
}

Status prepare_report_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir / ".staging", ec);
  if (ec)
    return invalid_argument(
        fmt::format("cannot create the report folder '{}': {}", dir.string(), ec.message()));
  return Status::ok();
}

Status write_report(const BatchResult& r) {
  const json summary = to_json(r);
  const fs::path dir = r.report_dir;
  ODB_RETURN_IF_ERROR(write_file_atomic(dir / "summary.json", json_text(summary) + "\n"));
  return write_file_atomic(dir / "index.html", batch::index_html(summary));
}

}  // namespace

int BatchResult::count(const std::string& status) const {
  int n = 0;
  for (const auto& j : jobs) n += j.status == status;
  return n;
}

Expected<BatchResult> batch(const BatchOptions& o, const CallContext& ctx) {
  ODB_RETURN_IF_ERROR(check_options(o));
  ODB_ASSIGN_OR_RETURN(std::vector<batch::Command> commands, parse_commands(o.commands));
  std::string exe = o.onnxdbg_executable;
  if (exe.empty()) {
    ODB_ASSIGN_OR_RETURN(exe, batch::find_onnxdbg_executable());
  }
  const fs::path dir = fs::absolute(o.report_dir).lexically_normal();
  ODB_RETURN_IF_ERROR(prepare_report_dir(dir));
  ODB_ASSIGN_OR_RETURN(std::vector<batch::ModelEntry> models, batch::find_models(o.models, dir));
  if (models.empty())
    return invalid_argument(fmt::format("no model found in {}", fmt::join(o.models, ", ")));
  // 0: one job per CPU of this machine, or of the cluster (the Ray executor asks it).
  size_t jobs = static_cast<size_t>(o.jobs);
  if (jobs == 0 && o.executor == "local") jobs = std::max(1u, std::thread::hardware_concurrency());
  ODB_ASSIGN_OR_RETURN(std::unique_ptr<batch::Executor> executor, make_executor(o, exe, jobs, dir));

  const auto start = std::chrono::steady_clock::now();
  batch::PlanOptions plan{exe, dir, o.timeout, o.max_memory, o.rerun};
  std::vector<batch::PlannedJob> planned = batch::plan_jobs(models, commands, plan);
  if (o.on_job_done)
    for (const auto& p : planned)
      if (!p.record.is_null()) o.on_job_done(to_job(p));
  batch::DriveOptions drive{dir, o.retries, o.timeout, ctx.progress, {}, {}};
  if (o.on_job_done) drive.on_done = [&](const batch::PlannedJob& p) { o.on_job_done(to_job(p)); };
  drive.cancelled = [&] { return ctx.cancel.cancelled(); };
  auto finished = batch::drive(*executor, planned, drive);
  executor.reset();  // the Ray executor's process ends here

  BatchResult r;
  r.report_dir = dir.string();
  r.executor = o.executor;
  r.cancelled = finished && !*finished;
  for (const auto& p : planned) {
    if (p.record.is_null()) continue;
    r.jobs.push_back(to_job(p));
    r.ran += !p.cached && p.attempts > 0;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ec;
  fs::remove(dir / ".staging", ec);  // empty unless another batch is writing
  ODB_RETURN_IF_ERROR(write_report(r));
  if (!finished) return finished.status();
  if (r.cancelled)
    add_warning(r.messages,
                fmt::format("stopped by Ctrl-C: {} of {} jobs have results; run the same "
                            "command again to run the rest",
                            r.jobs.size(), planned.size()));
  return r;
}

json to_json(const BatchResult& r) {
  json jobs = json::array();
  std::set<std::string> models;
  for (const auto& j : r.jobs) {
    models.insert(j.model);
    jobs.push_back({{"model", j.model},
                    {"model_sha256", j.model_sha256},
                    {"command", j.command},
                    {"key", j.key},
                    {"status", j.status},
                    {"exit_code", j.exit_code < 0 ? json() : json(j.exit_code)},
                    {"line", j.line},
                    {"seconds", j.seconds},
                    {"attempts", j.attempts},
                    {"cached", j.cached},
                    {"page", j.page.empty() ? json() : json(j.page)},
                    {"details", j.details}});
  }
  json counts = json::object();
  for (std::string_view s : batch::kJobStatuses) counts[std::string(s)] = r.count(std::string(s));
  return {{"onnxdbg_version", std::string(batch::onnxdbg_version())},
          {"executor", r.executor},
          {"report_dir", r.report_dir},
          {"seconds", r.seconds},
          {"models", models.size()},
          {"ran", r.ran},
          {"cancelled", r.cancelled},
          {"counts", std::move(counts)},
          {"fleet", batch::fleet_json(jobs)},
          {"jobs", std::move(jobs)}};
}

void print_text(const BatchResult& r, std::ostream& os, bool color) {
  // The summary.json to_json writes: its counts, models and fleet views, computed once.
  const json summary = to_json(r);
  std::string counts;
  for (std::string_view s : batch::kJobStatuses)
    if (int n = summary["counts"].value(std::string(s), 0); n > 0)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, s);
  size_t cached = 0;
  for (const auto& j : r.jobs) cached += j.cached;
  os << fmt::format("batch: {} jobs on {} models in {:.1f} s ({} run now, {} from the cache): {}\n",
                    r.jobs.size(), summary["models"].get<size_t>(), r.seconds, r.ran, cached,
                    counts);
  const json& fleet = summary["fleet"];
  for (const auto& row : fleet["op_types"])
    os << fmt::format("  first divergent op type {} on {}: {} model(s)\n", row.value("op_type", ""),
                      row.value("backend", ""), row["models"].size());
  for (const auto& row : fleet["backend_errors"])
    os << fmt::format("  {} failed to {} {} model(s)\n", row.value("backend", ""),
                      row.value("stage", ""), row["models"].size());
  os << report::colorize("report", "bold", color) << ": "
     << (fs::path(r.report_dir) / "index.html").string() << " (summary.json beside it)\n";
}

}  // namespace onnxdbg::api
