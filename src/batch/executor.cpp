// The local executor (processes on this machine) and the Ray executor (a Python process that
// speaks JSON lines: jobs in on its stdin, outcomes out on its stdout).
#include "batch/executor.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <list>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/atomic_file.h"
#include "core/subprocess.h"

namespace onnxdbg::batch {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

class LocalExecutor : public Executor {
 public:
  explicit LocalExecutor(size_t jobs) : jobs_(jobs == 0 ? 1 : jobs) {}
  ~LocalExecutor() override { stop(); }

  size_t capacity() const override { return jobs_; }

  Status submit(const JobSpec& job) override {
    SpawnOptions o;
    o.argv = job.argv;
    o.search_path = true;
    o.extra_environment = job.environment;
    o.in = Stdio::null();
    o.out = Stdio::to_file(job.staging / "stdout.json");
    o.err = Stdio::to_file(job.staging / "stderr.txt");
    o.new_process_group = true;  // Ctrl-C is ours to pass on; the deadline kills the group
    Running r{job, {}, Clock::now()};
    auto child = Subprocess::spawn(o);
    if (!child) {
      JobOutcome lost{job.id, -2,
                      0,      false,
                      0,      fmt::format("onnxdbg could not start: {}", child.status().message())};
      ended_.push_back(lost);
      return Status::ok();
    }
    r.child = std::move(*child);
    if (job.max_memory > 0) {
      const rlimit lim{job.max_memory, job.max_memory};
      prlimit(r.child.pid(), RLIMIT_DATA, &lim, nullptr);
    }
    running_.push_back(std::move(r));
    return Status::ok();
  }

  Expected<std::vector<JobOutcome>> collect(std::chrono::milliseconds wait) override {
    const auto deadline = Clock::now() + wait;
    for (;;) {
      reap();
      if (!ended_.empty() || running_.empty() || Clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::vector<JobOutcome> out;
    out.swap(ended_);
    return out;
  }

  void stop() override {
    for (auto& r : running_) r.child.terminate(std::chrono::seconds(2));
    running_.clear();
  }

 private:
  struct Running {
    JobSpec job;
    Subprocess child;
    Clock::time_point start;
  };

  /// Moves the jobs that ended or passed their deadline to ended_.
  void reap() {
    for (auto it = running_.begin(); it != running_.end();) {
      JobOutcome o{it->job.id, -1, 0, false, 0, ""};
      std::optional<ExitStatus> st = it->child.poll();
      if (!st && it->job.timeout > 0 && seconds_since(it->start) > it->job.timeout) {
        st = it->child.terminate(std::chrono::seconds(2));
        o.timed_out = true;
      }
      if (!st) {
        ++it;
        continue;
      }
      it->child.kill_group(SIGKILL);  // a worker it started and left behind
      o.exit_code = st->exit_code();
      o.signal = o.timed_out ? 0 : st->signal();
      o.seconds = seconds_since(it->start);
      ended_.push_back(o);
      it = running_.erase(it);
    }
  }

  size_t jobs_;
  std::list<Running> running_;
  std::vector<JobOutcome> ended_;
};

/// Reads whole lines from a descriptor as they come.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  /// Waits up to `wait` for data; appends the complete lines to `lines`. False at end of file.
  bool read(std::chrono::milliseconds wait, std::vector<std::string>& lines) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) > 0) {
      char buf[65536];
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n == 0) eof_ = true;
      if (n > 0) pending_.append(buf, static_cast<size_t>(n));
    }
    for (size_t nl; (nl = pending_.find('\n')) != std::string::npos;) {
      lines.push_back(pending_.substr(0, nl));
      pending_.erase(0, nl + 1);
    }
    return !eof_;
  }

 private:
  int fd_;
  bool eof_ = false;
  std::string pending_;
};

/// The last line the Ray executor's log says something on (read line by line: the log may be
/// long, and only its end matters).
std::string log_tail(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  return last;
}

class RayExecutor : public Executor {
 public:
  RayExecutor(Subprocess child, size_t jobs, fs::path log)
      : child_(std::move(child)), reader_(child_.stdout_fd()), jobs_(jobs), log_(std::move(log)) {}
  ~RayExecutor() override { stop(); }

  /// Twice the tasks that run at once: the cluster's next task is queued before one ends.
  size_t capacity() const override { return 2 * jobs_; }

  /// The first line: {"ready": true, ...} or {"fatal": "..."}.
  Status handshake(std::chrono::seconds wait) {
    const auto deadline = Clock::now() + wait;
    std::vector<std::string> lines;
    while (lines.empty() && Clock::now() < deadline)
      if (!reader_.read(std::chrono::milliseconds(200), lines)) break;
    if (lines.empty()) {
      const std::string tail = log_tail(log_);
      return invalid_argument(fmt::format("the Ray executor did not start{}{} (its log: {})",
                                          tail.empty() ? "" : ": ", tail, log_.string()));
    }
    const auto j = nlohmann::json::parse(lines[0], nullptr, false);
    if (j.is_object() && j.contains("fatal")) return invalid_argument(j.value("fatal", ""));
    if (!j.is_object() || !j.value("ready", false))
      return invalid_argument(fmt::format("the Ray executor said '{}' instead of ready", lines[0]));
    if (jobs_ == 0) jobs_ = std::max<size_t>(1, j.value("cpus", size_t{1}));
    return Status::ok();
  }

  Status submit(const JobSpec& job) override {
    const nlohmann::json j{{"id", job.id},
                           {"argv", job.argv},
                           {"model_arg", job.model_arg},
                           {"staging", job.staging.string()},
                           {"timeout", job.timeout},
                           {"max_memory", job.max_memory},
                           {"ship_model", job.ship_model},
                           {"ship_files", job.ship_files},
                           {"env", job.environment},
                           {"cwd", current_folder()}};
    if (write_all_fd(child_.stdin_fd(), j.dump() + "\n") != 0)
      return dead("it stopped reading jobs");
    return Status::ok();
  }

  Expected<std::vector<JobOutcome>> collect(std::chrono::milliseconds wait) override {
    std::vector<std::string> lines;
    const bool open = reader_.read(wait, lines);
    std::vector<JobOutcome> out;
    for (const auto& line : lines) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object()) continue;
      if (j.contains("fatal")) return dead(j.value("fatal", ""));
      if (!j.contains("id")) continue;
      out.push_back({j.value("id", size_t{0}), j.value("exit", -1), j.value("signal", 0),
                     j.value("timed_out", false), j.value("seconds", 0.0), j.value("lost", "")});
    }
    if (!open && out.empty()) return dead("it ended");
    return out;
  }

  void stop() override {
    if (child_.pid() > 0 && !child_.reaped()) child_.terminate(std::chrono::seconds(10));
  }

 private:
  Status dead(const std::string& why) {
    const std::string tail = log_tail(log_);
    return invalid_argument(fmt::format("the Ray executor failed: {}{}{} (its log: {})", why,
                                        tail.empty() ? "" : "; its last line: ", tail,
                                        log_.string()));
  }

  static std::string current_folder() {
    std::error_code ec;
    return fs::current_path(ec).string();
  }

  Subprocess child_;
  LineReader reader_;
  size_t jobs_;
  fs::path log_;
};

}  // namespace

struct SharedExecutor::State {
  std::mutex mutex;
  std::unique_ptr<Executor> executor;
  std::map<size_t, JobOutcome> ended;  ///< outcomes collected for another thread
  size_t next_id = 0;
  Status broken;  ///< the executor's error, once it failed
};

SharedExecutor::SharedExecutor(std::unique_ptr<Executor> executor) : state_(new State) {
  state_->executor = std::move(executor);
}

SharedExecutor::~SharedExecutor() = default;

Expected<JobOutcome> SharedExecutor::run(JobSpec job, const std::function<bool()>& cancelled) {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    job.id = s.next_id++;
    ODB_RETURN_IF_ERROR(s.executor->submit(job));
  }
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (!s.broken) return s.broken;
      if (cancelled && cancelled()) {
        s.executor->stop();
        return onnxdbg::cancelled("cancelled while a job ran; every job was stopped");
      }
      auto got = s.executor->collect(std::chrono::milliseconds(0));
      if (!got) {
        s.broken = got.status();
        return s.broken;
      }
      for (auto& o : *got) s.ended[o.id] = o;
      if (auto it = s.ended.find(job.id); it != s.ended.end()) {
        JobOutcome o = it->second;
        s.ended.erase(it);
        return o;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::unique_ptr<Executor> make_local_executor(size_t jobs) {
  return std::make_unique<LocalExecutor>(jobs);
}

Expected<std::unique_ptr<Executor>> make_ray_executor(const std::string& python,
                                                      const std::string& script,
                                                      const std::string& address, size_t jobs,
                                                      int retries, const fs::path& log) {
  SpawnOptions o;
  o.argv = {python, script, "--address", address, "--retries", std::to_string(retries)};
  o.search_path = true;
  o.in = Stdio::pipe();
  o.out = Stdio::pipe();
  o.err = Stdio::to_file(log);
  o.new_process_group = true;
  auto child = Subprocess::spawn(o);
  if (!child)
    return invalid_argument(fmt::format("cannot start the Ray executor with '{}': {}", python,
                                        child.status().message()));
  auto ex = std::make_unique<RayExecutor>(std::move(*child), jobs, log);
  ODB_RETURN_IF_ERROR(ex->handshake(std::chrono::seconds(120)));
  return std::unique_ptr<Executor>(std::move(ex));
}

Expected<std::unique_ptr<Executor>> connect_ray(std::string address, std::string python,
                                                std::string exe, size_t jobs, int retries,
                                                const fs::path& log) {
  if (address.empty())
    if (const char* env = std::getenv("RAY_ADDRESS"); env) address = env;
  if (address.empty())
    return invalid_argument(
        "--executor ray needs the cluster's address: --address HOST:PORT (as `ray start --head` "
        "prints) or $RAY_ADDRESS");
  if (python.empty())
    if (const char* env = std::getenv("ONNXDBG_PYTHON"); env) python = env;
  if (python.empty()) python = "python3";
  if (exe.empty()) {
    ODB_ASSIGN_OR_RETURN(exe, find_onnxdbg_executable());
  }
  ODB_ASSIGN_OR_RETURN(std::string script, find_ray_executor_script(exe));
  return make_ray_executor(python, script, address, jobs, retries, log);
}

Expected<std::string> find_ray_executor_script(const std::string& onnxdbg_executable) {
  if (const char* env = std::getenv("ONNXDBG_RAY_EXECUTOR"); env && *env) {
    if (fs::is_regular_file(env)) return std::string(env);
    return not_found(fmt::format("$ONNXDBG_RAY_EXECUTOR is {}, which is not a file", env));
  }
  const fs::path dir = fs::path(onnxdbg_executable).parent_path();
  std::vector<fs::path> candidates = {dir / "python" / "onnxdbg" / "ray_executor.py",
                                      dir / ".." / "ray_executor.py",  // a wheel's onnxdbg/bin
                                      dir / ".." / "share" / "onnxdbg" / "ray_executor.py"};
#ifdef ONNXDBG_SOURCE_DIR
  candidates.push_back(fs::path(ONNXDBG_SOURCE_DIR) / "python" / "onnxdbg" / "ray_executor.py");
#endif
  std::string looked;
  for (const auto& c : candidates) {
    if (fs::is_regular_file(c)) return c.lexically_normal().string();
    looked += (looked.empty() ? "" : ", ") + c.lexically_normal().string();
  }
  return not_found(fmt::format(
      "cannot find the Ray executor's script (looked at {}); set ONNXDBG_RAY_EXECUTOR to "
      "python/onnxdbg/ray_executor.py",
      looked));
}

Expected<std::string> find_onnxdbg_executable() {
  if (const char* env = std::getenv("ONNXDBG_CLI"); env && *env) {
    if (is_executable_file(env)) return std::string(env);
    return not_found(fmt::format("$ONNXDBG_CLI is {}, which is not an executable file", env));
  }
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && self.filename() == "onnxdbg") candidates.push_back(self);
  if (!ec) candidates.push_back(self.parent_path() / "onnxdbg");
  if (const char* w = std::getenv("ONNXDBG_WORKER"); w && *w)
    candidates.push_back(fs::path(w).parent_path() / "onnxdbg");
#ifdef ONNXDBG_CLI_BUILD_PATH
  candidates.emplace_back(ONNXDBG_CLI_BUILD_PATH);
#endif
#ifdef ONNXDBG_CLI_INSTALL_PATH
  candidates.emplace_back(ONNXDBG_CLI_INSTALL_PATH);
#endif
  std::string looked;
  for (const auto& c : candidates) {
    if (is_executable_file(c)) return c.string();
    looked += (looked.empty() ? "" : ", ") + c.string();
  }
  return not_found(fmt::format(
      "cannot find the onnxdbg executable (looked at {}); set ONNXDBG_CLI to its path", looked));
}

}  // namespace onnxdbg::batch
