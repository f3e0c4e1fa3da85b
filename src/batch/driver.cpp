// The batch's plan and loop.
#include "batch/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>

#include "batch/record.h"
#include "core/subprocess.h"

namespace onnxdbg::batch {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

/// The largest model the Ray executor sends as bytes; a larger one (or one with external data)
/// is read from its path, which the cluster's nodes must share.
constexpr uint64_t kMaxShippedModel = uint64_t{512} << 20;

json problem_record(const std::string& why) {
  return {{"status", "error"}, {"exit_code", nullptr}, {"seconds", 0.0}, {"attempts", 0},
          {"page", nullptr},   {"details", nullptr},   {"cause", why},   {"line", why}};
}

std::string clock_text(double s) {
  const auto t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{}:{:02}", t / 60, t % 60);
}

/// The job's whole command line, its files in `staging`.
std::vector<std::string> job_argv(const PlannedJob& job, const Command& c,
                                  const std::vector<std::string>& model_args,
                                  const std::string& exe) {
  std::vector<std::string> argv{exe, std::string(c.traits->name), job.model};
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  if (c.traits->takes_inputs) argv.insert(argv.end(), model_args.begin(), model_args.end());
  argv.push_back("--json");
  return argv;
}

class Loop {
 public:
  Loop(Executor& ex, std::vector<PlannedJob>& jobs, const DriveOptions& o)
      : ex_(ex), jobs_(jobs), o_(o) {}

  Expected<bool> run() {
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      if (!jobs_[i].record.is_null()) continue;
      auto [it, fresh] = first.emplace(jobs_[i].key, i);
      if (fresh)
        queue_.push_back(i);
      else
        followers_[it->second].push_back(i);
    }
    total_ = queue_.size();
    start_ = Clock::now();
    while (!queue_.empty() || running_ > 0) {
      if (o_.cancelled && o_.cancelled()) {
        ex_.stop();
        for (const auto& [id, staging] : staging_) fs::remove_all(staging, ec_);
        return false;
      }
      while (!queue_.empty() && running_ < ex_.capacity()) ODB_RETURN_IF_ERROR(submit());
      ODB_ASSIGN_OR_RETURN(std::vector<JobOutcome> ended,
                           ex_.collect(std::chrono::milliseconds(200)));
      for (const auto& o : ended) ODB_RETURN_IF_ERROR(finish(o));
      report_progress();
    }
    return true;
  }

 private:
  Status submit() {
    const size_t i = queue_.front();
    queue_.pop_front();
    PlannedJob& job = jobs_[i];
    ODB_ASSIGN_OR_RETURN(fs::path staging, make_staging(o_.report_dir, job.key));
    JobSpec spec = job.spec;
    spec.id = i;
    spec.staging = staging;
    if (job.traits->writes_page) {
      spec.argv.push_back("--html");
      spec.argv.push_back((staging / "page.html").string());
    }
    if (!job.traits->files_flag.empty() &&
        std::none_of(spec.argv.begin(), spec.argv.end(), [&](const std::string& a) {
          return a.rfind(job.traits->files_flag, 0) == 0;
        })) {
      spec.argv.emplace_back(job.traits->files_flag);
      spec.argv.push_back((staging / "repro").string());
    }
    if (job.traits->writes_model) {
      spec.argv.push_back("-o");
      spec.argv.push_back((staging / "reduced.onnx").string());
    }
    staging_[i] = staging;
    ++job.attempts;
    ++running_;
    return ex_.submit(spec);
  }

  Status finish(const JobOutcome& o) {
    --running_;
    PlannedJob& job = jobs_[o.id];
    const fs::path staging = staging_[o.id];
    staging_.erase(o.id);
    const bool crashed = !o.timed_out && (o.signal != 0 || (!o.lost.empty() && o.exit_code != -2));
    if (crashed && job.attempts <= o_.retries) {
      fs::remove_all(staging, ec_);
      queue_.push_front(o.id);  // again, before the jobs not yet started
      return Status::ok();
    }
    std::string output = read_file_head(staging / "stdout.json", kMaxJobOutput);
    job.record = job_record(o, output, staging, job.traits->name, o_.timeout, job.attempts);
    ODB_RETURN_IF_ERROR(commit_job(o_.report_dir, job.key, staging, job.record, std::move(output)));
    ++done_;
    ++by_status_[job.record.value("status", "error")];
    if (o_.on_done) o_.on_done(job);
    for (size_t f : followers_[o.id]) {
      jobs_[f].record = job.record;
      jobs_[f].cached = true;
      if (o_.on_done) o_.on_done(jobs_[f]);
    }
    return Status::ok();
  }

  void report_progress() {
    if (!o_.progress) return;
    const auto now = Clock::now();
    if (now - last_progress_ < std::chrono::seconds(1)) return;
    last_progress_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    std::string eta;
    if (done_ > 0 && done_ < total_)
      eta = fmt::format(", about {} left", clock_text(elapsed / static_cast<double>(done_) *
                                                      static_cast<double>(total_ - done_)));
    std::string counts;
    for (std::string_view st : kJobStatuses)
      if (auto it = by_status_.find(st); it != by_status_.end())
        counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", it->second, st);
    o_.progress(fmt::format("batch: {}/{} done{}, {} running, {}{}", done_, total_,
                            counts.empty() ? "" : " (" + counts + ")", running_,
                            clock_text(elapsed), eta));
  }

  Executor& ex_;
  std::vector<PlannedJob>& jobs_;
  const DriveOptions& o_;
  std::deque<size_t> queue_;
  std::map<size_t, std::vector<size_t>> followers_;
  std::map<size_t, fs::path> staging_;
  size_t running_ = 0, total_ = 0, done_ = 0;
  std::map<std::string, size_t, std::less<>> by_status_;
  Clock::time_point start_, last_progress_;
  std::error_code ec_;
};

}  // namespace

std::vector<PlannedJob> plan_jobs(const std::vector<ModelEntry>& models,
                                  const std::vector<Command>& commands, const PlanOptions& o) {
  std::vector<PlannedJob> jobs;
  for (const auto& m : models) {
    std::string problem = m.problem;
    ModelDigest digest;
    if (problem.empty()) {
      auto d = model_digest(m.path);
      if (d)
        digest = *d;
      else
        problem = std::string(d.status().message());
    }
    for (const auto& c : commands) {
      PlannedJob job;
      job.model = m.path;
      job.model_sha256 = digest.sha256;
      job.command = c.text;
      job.traits = c.traits;
      if (!problem.empty()) {
        job.record = problem_record(problem);
        jobs.push_back(std::move(job));
        continue;
      }
      job.key = job_key(digest.sha256, c, m.args, o.timeout, o.max_memory);
      job.spec.argv = job_argv(job, c, m.args, o.onnxdbg_executable);
      job.spec.model_arg = 2;
      job.spec.timeout = o.timeout;
      job.spec.max_memory = o.max_memory;
      job.spec.ship_model = !digest.external_data && digest.bytes <= kMaxShippedModel;
      if (!o.rerun)
        if (auto rec = cached_record(o.report_dir, job.key); rec && is_final(*rec)) {
          job.record = std::move(*rec);
          job.cached = true;
        }
      jobs.push_back(std::move(job));
    }
  }
  return jobs;
}

Expected<bool> drive(Executor& executor, std::vector<PlannedJob>& jobs,
                     const DriveOptions& options) {
  return Loop(executor, jobs, options).run();
}

}  // namespace onnxdbg::batch
