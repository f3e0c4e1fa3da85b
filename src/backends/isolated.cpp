// Isolated backends: each Session owns one onnxdbg-worker process (core/subprocess.h), spawned
// with its stdin and stdout as the request/reply pipes and its stderr in an unlinked temp file
// (read back on a crash). Every wait has a deadline; a worker that dies or hangs becomes a
// kBackendError. A worker whose session ended cleanly waits in a pool for the next load of the same
// backend (layerwise runs load dozens of models); one that crashed, hung or misbehaved never
// returns.
#include "backends/isolated.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "backends/worker_protocol.h"
#include "core/subprocess.h"

extern char** environ;  // worker_environment() starts from ours

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;
using worker::Clock;
using worker::IoOutcome;
using worker::IoResult;

/// How long a worker gets to exit by itself once its pipe is closed, before SIGKILL.
constexpr auto kExitGrace = std::chrono::seconds(2);

std::string seconds_text(double s) { return fmt::format("{:g} s", s); }

/// "SIGSEGV (segmentation fault)" style name of a signal.
std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  std::string name = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  const char* what = nullptr;
  switch (sig) {
    case SIGSEGV:
      what = "segmentation fault";
      break;
    case SIGBUS:
      what = "bus error";
      break;
    case SIGFPE:
      what = "floating-point exception";
      break;
    case SIGILL:
      what = "illegal instruction";
      break;
    case SIGABRT:
      what = "aborted";
      break;
    case SIGKILL:
      what = "killed; out of memory?";
      break;
    default:
      what = sigdescr_np(sig);
      break;
  }
  return what ? name + " (" + what + ")" : name;
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

/// glibc malloc tunables for the worker: freed memory (up to 32 MiB blocks from the heap, not
/// mmap; no trimming below 4 GiB) kept for reuse by the next run or load instead of being
/// returned to the kernel and zeroed again: the backends allocate hundreds of megabytes of outputs
/// in a layerwise run, and page faults and zeroing would dominate its time. onnxdbg's main() sets
/// the same for itself. Not glibc.malloc.hugetlb=1: with the kernel's usual THP defrag=madvise,
/// a fault in a huge-page region may stall in direct compaction; on PP-OCRv4 det 640x640 the first
/// layerwise batch (49 tensors, 382 MiB) took 0.8-1.4 s with it and 0.6-1.0 s without, and whole
/// `run --layerwise --isolate` commands 3.0-4.3 s against 2.6-3.4 s (four runs each, alternating).
constexpr const char* kMallocTunables =
    "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296";

/// Our environment, plus kMallocTunables unless GLIBC_TUNABLES already sets mmap_threshold, and
/// ONNX Runtime's telemetry off unless the user set ORT_DISABLE_TELEMETRY: a debugging tool sends
/// nothing anywhere, and ORT's telemetry client writes .ses and mat-debug-PID.log files into
/// TMPDIR from every worker (about 120 in one run of the test suite).
std::vector<std::string> worker_environment() {
  std::vector<std::string> env;
  bool tunables = false;
  bool telemetry = false;
  for (char** e = environ; e && *e; ++e) {
    std::string v = *e;
    telemetry = telemetry || v.rfind("ORT_DISABLE_TELEMETRY=", 0) == 0;
    if (v.rfind("GLIBC_TUNABLES=", 0) == 0) {
      tunables = true;
      if (v.find("glibc.malloc.mmap_threshold") == std::string::npos)
        v += (v.size() > 15 ? ":" : "") + std::string(kMallocTunables);
    }
    env.push_back(std::move(v));
  }
  if (!tunables) env.push_back(std::string("GLIBC_TUNABLES=") + kMallocTunables);
  if (!telemetry) env.emplace_back("ORT_DISABLE_TELEMETRY=1");
  return env;
}

/// One onnxdbg-worker process and its pipes.
class WorkerProcess {
 public:
  static Expected<std::unique_ptr<WorkerProcess>> spawn(const std::string& backend);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  /// Sends one request and waits for its reply, both within `timeout_s` seconds. `doing` names
  /// the step for messages ("loading the model"). A reply with ok=false gives the worker's Status.
  /// With a `sink`, the reply's tensors go to it as they are read (see worker::read_frame), and
  /// so do those of the {"part":true} frames that may precede the reply (a streamed run).
  Expected<worker::Frame> call(const nlohmann::json& header, const TensorMap& tensors,
                               double timeout_s, const std::string& doing,
                               const TensorSink* sink = nullptr) {
    return call_impl(header, &tensors, nullptr, timeout_s, doing, sink);
  }
  /// As call(), the request carrying `values` (worker::write_value_frame).
  Expected<worker::Frame> call_values(const nlohmann::json& header, const ValueMap& values,
                                      double timeout_s, const std::string& doing) {
    return call_impl(header, nullptr, &values, timeout_s, doing, nullptr);
  }
  /// Whether the worker may serve another request: no crash, hang or protocol error seen, and
  /// the process has not exited meanwhile.
  bool usable() { return gone_.is_ok() && proc_.pid() > 0 && !proc_.poll(); }
  /// The pool's key: the executable and the backend it runs.
  std::string pool_key() const { return exe_ + '\n' + backend_; }

 private:
  explicit WorkerProcess(std::string backend) : backend_(std::move(backend)) {}
  /// call() and call_values(): the request carries `tensors`, or else `values`.
  Expected<worker::Frame> call_impl(const nlohmann::json& header, const TensorMap* tensors,
                                    const ValueMap* values, double timeout_s,
                                    const std::string& doing, const TensorSink* sink);
  Status on_timeout(double timeout_s, const std::string& doing);
  Status on_eof(const std::string& doing);
  Status on_protocol_error(const std::string& error, const std::string& doing);
  void kill_and_reap();
  /// The last few lines the worker wrote to stderr, as " | "-joined text ("" if none).
  std::string stderr_tail() const;
  std::string with_stderr(std::string message) const;

  std::string backend_;
  std::string exe_;
  // The worker; our ends of its pipes (stdin_fd: requests, stdout_fd: replies) are non-blocking.
  Subprocess proc_;
  int err_ = -1;  // the worker's stderr file (unlinked)
  Status gone_;   // set once the worker is dead: why
};

Expected<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(const std::string& backend) {
  ODB_ASSIGN_OR_RETURN(const std::string exe, find_worker_executable());
  std::unique_ptr<WorkerProcess> w(new WorkerProcess(backend));
  w->exe_ = exe;

  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/onnxdbg-worker-stderr-XXXXXX";
  w->err_ = mkostemp(templ.data(), O_CLOEXEC);
  if (w->err_ >= 0) unlink(templ.c_str());

  SpawnOptions options;
  options.argv = {exe, backend};
  options.environment = worker_environment();
  options.in = Stdio::pipe();
  options.out = Stdio::pipe();
  options.err = w->err_ >= 0 ? Stdio::from_fd(w->err_) : Stdio::null();
  Expected<Subprocess> proc = Subprocess::spawn(options);
  if (!proc) {
    return backend_error(
        fmt::format("cannot start the worker {}: {}", exe, proc.status().message()));
  }
  w->proc_ = std::move(*proc);
  const int to = w->proc_.stdin_fd(), from = w->proc_.stdout_fd();
  // Bigger pipes than Linux's 64 KiB default: layerwise runs move hundreds of megabytes, and
  // every full pipe costs a context switch. Best effort (capped by /proc/sys/fs/pipe-max-size).
  fcntl(to, F_SETPIPE_SZ, 1 << 20);
  fcntl(from, F_SETPIPE_SZ, 1 << 20);
  // Our ends never block: every wait goes through poll with a deadline.
  fcntl(to, F_SETFL, fcntl(to, F_GETFL) | O_NONBLOCK);
  fcntl(from, F_SETFL, fcntl(from, F_GETFL) | O_NONBLOCK);
  return w;
}

WorkerProcess::~WorkerProcess() {
  proc_.close_stdin();  // the worker reads EOF and exits
  if (proc_.pid() > 0 && !proc_.wait(kExitGrace)) kill_and_reap();
  proc_ = Subprocess();  // closes the reply pipe
  close_fd(err_);
}

void WorkerProcess::kill_and_reap() { proc_.terminate(Clock::duration::zero()); }

std::string WorkerProcess::stderr_tail() const {
  if (err_ < 0) return {};
  struct stat st;
  if (fstat(err_, &st) != 0 || st.st_size == 0) return {};
  const off_t want = std::min<off_t>(st.st_size, 4096);
  std::string buf(static_cast<size_t>(want), '\0');
  const ssize_t got = pread(err_, buf.data(), buf.size(), st.st_size - want);
  if (got <= 0) return {};
  buf.resize(static_cast<size_t>(got));
  std::vector<std::string> lines;
  size_t start = 0;
  if (want < st.st_size) start = buf.find('\n') == std::string::npos ? 0 : buf.find('\n') + 1;
  while (start < buf.size()) {
    size_t end = buf.find('\n', start);
    if (end == std::string::npos) end = buf.size();
    std::string line = buf.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
    start = end + 1;
  }
  constexpr size_t kLines = 5;
  std::string out;
  for (size_t i = lines.size() > kLines ? lines.size() - kLines : 0; i < lines.size(); ++i) {
    if (!out.empty()) out += " | ";
    out += lines[i];
  }
  return out;
}

std::string WorkerProcess::with_stderr(std::string message) const {
  const std::string tail = stderr_tail();
  if (!tail.empty()) message += "; its stderr ended with: " + tail;
  return message;
}

Status WorkerProcess::on_timeout(double timeout_s, const std::string& doing) {
  kill_and_reap();
  gone_ = backend_error(with_stderr(fmt::format("{} did not finish {} within {}; killed", backend_,
                                                doing, seconds_text(timeout_s))));
  return gone_;
}

Status WorkerProcess::on_eof(const std::string& doing) {
  std::string what;
  const std::optional<ExitStatus> status = proc_.wait(kExitGrace);
  if (!status) {
    kill_and_reap();
    what = fmt::format("{} closed its pipe without answering while {}; killed", backend_, doing);
  } else {
    const int s = status->raw;
    if (WIFSIGNALED(s) && WTERMSIG(s) == SIGABRT) {
      what = fmt::format("{} aborted (SIGABRT) while {}", backend_, doing);
    } else if (WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL) {
      what = fmt::format("{} was killed by SIGKILL while {} (out of memory?)", backend_, doing);
    } else if (WIFSIGNALED(s)) {
      what = fmt::format("{} crashed with {} while {}", backend_, signal_text(WTERMSIG(s)), doing);
    } else if (WIFEXITED(s)) {
      what = fmt::format("{} exited with code {} while {}", backend_, WEXITSTATUS(s), doing);
    } else {
      what = fmt::format("{} ended while {}", backend_, doing);
    }
  }
  gone_ = backend_error(with_stderr(std::move(what)));
  return gone_;
}

Status WorkerProcess::on_protocol_error(const std::string& error, const std::string& doing) {
  kill_and_reap();
  gone_ = internal_error(with_stderr(
      fmt::format("protocol error from the {} worker while {}: {}", backend_, doing, error)));
  return gone_;
}

Expected<worker::Frame> WorkerProcess::call_impl(const nlohmann::json& header,
                                                 const TensorMap* tensors, const ValueMap* values,
                                                 double timeout_s, const std::string& doing,
                                                 const TensorSink* sink) {
  if (!gone_.is_ok()) {
    return backend_error(fmt::format("the {} worker is gone: {}", backend_, gone_.message()));
  }
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  auto handle = [&](const IoOutcome& o) -> Status {
    switch (o.result) {
      case IoResult::kOk:
        return Status::ok();
      case IoResult::kTimeout:
        return on_timeout(timeout_s, doing);
      case IoResult::kEof:
        return on_eof(doing);
      case IoResult::kError:
        return on_protocol_error(o.error, doing);
    }
    return internal_error("unreachable");
  };
  ODB_RETURN_IF_ERROR(
      handle(tensors ? worker::write_frame(proc_.stdin_fd(), header, *tensors, deadline)
                     : worker::write_value_frame(proc_.stdin_fd(), header, *values, deadline)));
  worker::Frame reply;
  do {
    ODB_RETURN_IF_ERROR(handle(worker::read_frame(proc_.stdout_fd(), &reply, deadline, sink)));
    if (reply.header.value("part", false) && !sink) {
      return on_protocol_error("a streamed output, which was not asked for", doing);
    }
  } while (reply.header.value("part", false));
  if (!reply.header.value("ok", false)) {
    return worker::status_from_json(reply.header.value("status", nlohmann::json::object()));
  }
  return reply;
}

/// Idle workers, one per backend name at most, kept until the next load or the end of onnxdbg
/// (their pipes close and they exit). Reusing one saves starting a process, loading the
/// third-party libraries and faulting in fresh memory for every model a layerwise run loads.
class WorkerPool {
 public:
  /// An idle worker for `backend` (of the executable find_worker_executable names now), or a
  /// new one.
  static Expected<std::unique_ptr<WorkerProcess>> take(const std::string& backend) {
    ODB_ASSIGN_OR_RETURN(const std::string exe, find_worker_executable());
    std::unique_ptr<WorkerProcess> w;
    {
      std::lock_guard<std::mutex> lock(mutex());
      auto it = idle().find(exe + '\n' + backend);
      if (it != idle().end()) {
        w = std::move(it->second);
        idle().erase(it);
      }
    }
    if (w && w->usable()) return w;
    return WorkerProcess::spawn(backend);
  }
  /// Keeps `w` for the next take() when it is usable and no other worker of its kind waits.
  static void give_back(std::unique_ptr<WorkerProcess> w) {
    if (!w || !w->usable()) return;
    std::lock_guard<std::mutex> lock(mutex());
    const std::string key = w->pool_key();
    idle().try_emplace(key, std::move(w));
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::map<std::string, std::unique_ptr<WorkerProcess>>& idle() {
    static std::map<std::string, std::unique_ptr<WorkerProcess>> workers;
    return workers;
  }
};

/// How long an idle worker gets to drop its session before it is killed instead of pooled.
constexpr double kUnloadTimeoutSeconds = 10;

class IsolatedSession : public Session {
 public:
  IsolatedSession(std::unique_ptr<WorkerProcess> w, SessionInfo info, double run_timeout_s)
      : worker_(std::move(w)), info_(std::move(info)), run_timeout_s_(run_timeout_s) {}
  ~IsolatedSession() override {
    if (worker_ && worker_->usable() &&
        worker_->call({{"type", "unload"}}, {}, kUnloadTimeoutSeconds, "unloading the model"))
      WorkerPool::give_back(std::move(worker_));
  }
  IsolatedSession(const IsolatedSession&) = delete;
  IsolatedSession& operator=(const IsolatedSession&) = delete;
  const SessionInfo& info() const override { return info_; }

  Expected<SessionRunResult> run(const TensorMap& inputs) override {
    return run_observing(inputs, {});
  }

  Expected<SessionRunResult> run_observing(const TensorMap& inputs,
                                           const std::vector<std::string>& tensors) override {
    return run_impl(inputs, tensors, nullptr);
  }

  Expected<SessionRunResult> run_each(const TensorMap& inputs,
                                      const std::vector<std::string>& observe,
                                      const TensorSink& sink) override {
    return run_impl(inputs, observe, &sink);
  }

  /// Sequences and optionals cross to the worker as values (worker_protocol.h), so the backend
  /// there gets them as they are, not the default's tensors-only refusal.
  Expected<ValueRunResult> run_values(const ValueMap& inputs) override {
    ODB_ASSIGN_OR_RETURN(worker::Frame reply,
                         worker_->call_values({{"type", "run_values"}}, inputs, run_timeout_s_,
                                              "running the model"));
    merge_warnings(reply.header);
    if (!reply.header.contains("values"))
      return internal_error("the worker's reply to run_values carries no values");
    ValueRunResult result;
    result.outputs = std::move(reply.values);
    result.run_seconds = reply.header.value("run_seconds", 0.0);
    return result;
  }

 private:
  /// Adds the warnings a run's reply reports that the session's info does not list yet.
  void merge_warnings(const nlohmann::json& header) {
    for (const auto& w : header.value("warnings", std::vector<std::string>{})) {
      if (std::find(info_.warnings.begin(), info_.warnings.end(), w) == info_.warnings.end()) {
        info_.warnings.push_back(w);
      }
    }
  }

  Expected<SessionRunResult> run_impl(const TensorMap& inputs,
                                      const std::vector<std::string>& tensors,
                                      const TensorSink* sink) {
    nlohmann::json req = {{"type", "run"}};
    if (!tensors.empty()) req["observe"] = tensors;
    if (sink) req["stream"] = true;
    ODB_ASSIGN_OR_RETURN(worker::Frame reply,
                         worker_->call(req, inputs, run_timeout_s_, "running the model", sink));
    merge_warnings(reply.header);
    SessionRunResult result;
    result.outputs = std::move(reply.tensors);
    result.run_seconds = reply.header.value("run_seconds", 0.0);
    if (reply.header.contains("load_seconds"))
      result.load_seconds = reply.header.value("load_seconds", 0.0);
    result.peak_rss_bytes = reply.header.value("peak_rss_bytes", int64_t{0});
    result.not_observed = reply.header.value("not_observed", std::map<std::string, std::string>{});
    return result;
  }

  std::unique_ptr<WorkerProcess> worker_;
  SessionInfo info_;
  double run_timeout_s_;
};

class IsolatedBackend : public Backend {
 public:
  IsolatedBackend(BackendSpec spec, IsolationOptions options)
      : spec_(std::move(spec)), options_(options) {}
  std::string name() const override { return spec_.name; }
  const BackendSpec& spec() const override { return spec_; }

  std::string describe() const override {
    if (!description_) {
      auto w = WorkerPool::take(spec_.name);
      Expected<worker::Frame> reply =
          w ? (*w)->call(request("describe"), {}, options_.load_timeout_seconds, "starting")
            : Expected<worker::Frame>(w.status());
      if (w) WorkerPool::give_back(std::move(*w));
      description_ = reply ? reply->header.value("describe", spec_.name)
                           : spec_.name + " (unavailable: " + reply.status().message() + ")";
    }
    return *description_;
  }

  Expected<std::unique_ptr<Session>> do_load(const fs::path& model_path,
                                             const fs::path& external_data_dir) override {
    ODB_ASSIGN_OR_RETURN(auto w, WorkerPool::take(spec_.name));
    std::error_code ec;
    const fs::path absolute = fs::absolute(model_path, ec);
    nlohmann::json req = request("load");
    req["model"] = (ec ? model_path : absolute).string();
    if (!external_data_dir.empty()) {
      const fs::path dir = fs::absolute(external_data_dir, ec);
      req["external_data_dir"] = (ec ? external_data_dir : dir).string();
    }
    Expected<worker::Frame> reply =
        w->call(req, {}, options_.load_timeout_seconds, "loading the model");
    if (!reply) {
      WorkerPool::give_back(std::move(w));  // refused the model but still well: kept
      return reply.status();
    }
    SessionInfo info =
        worker::info_from_json(reply->header.value("info", nlohmann::json::object()));
    return std::unique_ptr<Session>(
        new IsolatedSession(std::move(w), std::move(info), options_.run_timeout_seconds));
  }

 private:
  nlohmann::json request(const char* type) const {
    return {{"type", type}, {"backend", spec_.name}, {"options", spec_.options}};
  }

  BackendSpec spec_;
  IsolationOptions options_;
  mutable std::optional<std::string> description_;
};

}  // namespace

Expected<std::string> find_worker_executable() {
  if (const char* env = std::getenv("ONNXDBG_WORKER"); env && *env) {
    if (is_executable_file(env)) return std::string(env);
    return not_found(fmt::format("$ONNXDBG_WORKER is {}, which is not an executable file", env));
  }
  std::vector<std::string> looked = {"$ONNXDBG_WORKER (unset)"};
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path next_to_us = self.parent_path() / "onnxdbg-worker";
    if (is_executable_file(next_to_us)) return next_to_us.string();
    looked.push_back(next_to_us.string());
  }
#ifdef ONNXDBG_WORKER_BUILD_PATH
  if (is_executable_file(ONNXDBG_WORKER_BUILD_PATH)) return std::string(ONNXDBG_WORKER_BUILD_PATH);
  looked.emplace_back(ONNXDBG_WORKER_BUILD_PATH);
#endif
#ifdef ONNXDBG_WORKER_INSTALL_PATH
  if (is_executable_file(ONNXDBG_WORKER_INSTALL_PATH))
    return std::string(ONNXDBG_WORKER_INSTALL_PATH);
  looked.emplace_back(ONNXDBG_WORKER_INSTALL_PATH);
#endif
  return not_found(fmt::format(
      "cannot find the onnxdbg-worker executable (looked at {}); set ONNXDBG_WORKER to its path",
      fmt::join(looked, ", ")));
}

Expected<std::unique_ptr<Backend>> make_isolated_backend(const BackendSpec& spec,
                                                         IsolationOptions options) {
  if (!is_isolated_backend(spec.name)) {
    std::string names;
    for (const auto& d : backend_docs())
      if (d.isolated) names += (names.empty() ? "" : ", ") + d.name;
    return invalid_argument(
        fmt::format("'{}' is not a backend the worker runs (it runs: {})", spec.name, names));
  }
  if (auto it = spec.options.find("timeout"); it != spec.options.end()) {
    char* end = nullptr;
    const double t = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0' || !std::isfinite(t) || t <= 0) {
      return invalid_argument(fmt::format(
          "{}: timeout must be a positive number of seconds, not '{}'", spec.name, it->second));
    }
    options.load_timeout_seconds = options.run_timeout_seconds = t;
  }
  for (const char* hook : {"debug_crash", "debug_abort", "debug_hang"}) {
    if (auto it = spec.options.find(hook);
        it != spec.options.end() && it->second != "load" && it->second != "run") {
      return invalid_argument(fmt::format("{}: {} must be 'load' or 'run'", spec.name, hook));
    }
  }
  return std::unique_ptr<Backend>(new IsolatedBackend(spec, options));
}

}  // namespace onnxdbg
