// onnxdbg-worker: runs one third-party backend (onnxruntime, opencv) for onnxdbg, one session at a
// time (a load replaces the previous one), so a crash or hang in it cannot take onnxdbg down.
// Speaks the protocol of backends/worker_protocol.h on stdin/stdout; stderr is captured by onnxdbg
// and quoted when the worker dies.
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include "backends/worker_protocol.h"

namespace onnxdbg {

// Each isolated backend's factory, defined in src/backends/<name>/<name>_backend.cpp (linked into
// this binary alone).
#define ONNXDBG_IN_PROCESS_BACKEND(name, factory)
#define ONNXDBG_ISOLATED_BACKEND(name, factory) \
  Expected<std::unique_ptr<Backend>> factory(const BackendSpec& spec);
#include "backends/backends.def"
#undef ONNXDBG_IN_PROCESS_BACKEND
#undef ONNXDBG_ISOLATED_BACKEND

namespace {

using Factory = std::function<Expected<std::unique_ptr<Backend>>(const BackendSpec&)>;

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> f = {
#define ONNXDBG_IN_PROCESS_BACKEND(name, factory)
#define ONNXDBG_ISOLATED_BACKEND(name, factory) {#name, factory},
#include "backends/backends.def"
#undef ONNXDBG_IN_PROCESS_BACKEND
#undef ONNXDBG_ISOLATED_BACKEND
  };
  return f;
}

/// Test hooks (documented in worker_protocol.h): make this worker crash, abort or hang at `point`.
void maybe_misbehave(const std::map<std::string, std::string>& options, const std::string& point) {
  auto is = [&](const char* key) {
    auto it = options.find(key);
    return it != options.end() && it->second == point;
  };
  if (is("debug_crash") || is("debug_abort")) {
    const bool crash = is("debug_crash");
    std::fprintf(stderr, "onnxdbg-worker: test hook %s=%s: %s\n",
                 crash ? "debug_crash" : "debug_abort", point.c_str(),
                 crash ? "raising SIGSEGV" : "calling abort()");
    std::fflush(stderr);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // a deliberate crash should not leave a core file
    if (crash) {
      // The default action, as a real crash in ONNX Runtime gets it: a sanitizer build's own
      // SIGSEGV handler would report the signal and exit 1 instead.
      signal(SIGSEGV, SIG_DFL);
      raise(SIGSEGV);
    }
    std::abort();
  }
  if (is("debug_hang")) {
    std::fprintf(stderr, "onnxdbg-worker: test hook debug_hang=%s: sleeping forever\n",
                 point.c_str());
    std::fflush(stderr);
    for (;;) pause();
  }
}

/// Resets the kernel's peak resident memory of this process (VmHWM) to the current one, so a
/// reused worker reports each session's peak. Best effort: older kernels lack it.
void reset_peak_rss() {
  const int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t n = write(fd, "5", 1);
  close(fd);
}

/// Peak resident memory since the last reset_peak_rss() (VmHWM of /proc/self/status), bytes;
/// getrusage's lifetime peak where /proc cannot tell.
int64_t peak_rss_since_load() {
  if (std::FILE* f = std::fopen("/proc/self/status", "re")) {
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "VmHWM: %lld kB", &kib) == 1) break;
    std::fclose(f);
    if (kib >= 0) return static_cast<int64_t>(kib) * 1024;
  }
  return peak_rss_bytes();
}

struct Worker {
  std::map<std::string, std::string> options;  // as given, isolation options included
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Session> session;

  Status make_backend(const nlohmann::json& req) {
    BackendSpec spec;
    spec.name = req.at("backend").get<std::string>();
    options = req.value("options", std::map<std::string, std::string>{});
    for (const auto& [k, v] : options) {
      if (!worker::is_isolation_option(k)) spec.options[k] = v;
    }
    auto f = factories().find(spec.name);
    if (f == factories().end())
      return invalid_argument("onnxdbg-worker has no backend '" + spec.name + "'");
    ODB_ASSIGN_OR_RETURN(backend, f->second(spec));
    return Status::ok();
  }

  /// Handles one request; fills `reply` (ok=true) or returns the error to send. A streamed run
  /// ("stream": true) hands each output to `part` (which sends it) instead of `outputs`; a
  /// run_values request puts its outputs in `values` (sent as the reply's "values").
  Status handle(const worker::Frame& req, nlohmann::json* reply, TensorMap* outputs,
                std::optional<ValueMap>* values, const TensorSink& part) {
    const std::string type = req.header.value("type", "");
    if (type == "describe") {
      ODB_RETURN_IF_ERROR(make_backend(req.header));
      (*reply)["describe"] = backend->describe();
      return Status::ok();
    }
    if (type == "load") {
      // A worker is reused for the next load once its session is done (see isolated.cpp): the
      // previous session goes first, and the peak memory reported from now on is this one's.
      session.reset();
      reset_peak_rss();
      ODB_RETURN_IF_ERROR(make_backend(req.header));
      maybe_misbehave(options, "load");
      const std::string path = req.header.at("model").get<std::string>();
      ODB_ASSIGN_OR_RETURN(session, backend->load(path, req.header.value("external_data_dir", "")));
      (*reply)["info"] = worker::info_to_json(session->info());
      return Status::ok();
    }
    if (type == "run") {
      if (!session) return internal_error("run before load");
      maybe_misbehave(options, "run");
      const size_t warnings_before = session->info().warnings.size();
      const auto observe = req.header.value("observe", std::vector<std::string>{});
      const bool stream = req.header.value("stream", false);
      ODB_ASSIGN_OR_RETURN(SessionRunResult result,
                           stream            ? session->run_each(req.tensors, observe, part)
                           : observe.empty() ? session->run(req.tensors)
                                             : session->run_observing(req.tensors, observe));
      if (!result.not_observed.empty()) (*reply)["not_observed"] = result.not_observed;
      (*reply)["run_seconds"] = result.run_seconds;
      if (result.load_seconds) (*reply)["load_seconds"] = *result.load_seconds;
      (*reply)["peak_rss_bytes"] = peak_rss_since_load();
      (*reply)["warnings"] = new_warnings(warnings_before);
      *outputs = std::move(result.outputs);
      return Status::ok();
    }
    if (type == "run_values") {
      if (!session) return internal_error("run before load");
      maybe_misbehave(options, "run");
      const size_t warnings_before = session->info().warnings.size();
      ODB_ASSIGN_OR_RETURN(ValueRunResult result, session->run_values(req.values));
      (*reply)["run_seconds"] = result.run_seconds;
      (*reply)["peak_rss_bytes"] = peak_rss_since_load();
      (*reply)["warnings"] = new_warnings(warnings_before);
      *values = std::move(result.outputs);
      return Status::ok();
    }
    if (type == "unload") {
      session.reset();
      backend.reset();
      return Status::ok();
    }
    return internal_error("unknown request type '" + type + "'");
  }

  /// The session's warnings from index `before` on: those the last run added.
  std::vector<std::string> new_warnings(size_t before) const {
    const auto& warnings = session->info().warnings;
    return std::vector<std::string>(
        warnings.begin() + static_cast<std::ptrdiff_t>(std::min(before, warnings.size())),
        warnings.end());
  }
};

int worker_main() {
  if (isatty(0)) {
    std::fprintf(stderr,
                 "onnxdbg-worker is a helper process of onnxdbg; it speaks a binary protocol "
                 "on stdin/stdout and is not meant to be run by hand.\n");
    return 2;
  }
  // Keep the protocol pipes on private descriptors and point fd 1 at stderr, so a library that
  // prints to stdout cannot corrupt the reply stream.
  const int in = fcntl(0, F_DUPFD_CLOEXEC, 3);
  const int out = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (in < 0 || out < 0) return 3;
  dup2(2, 1);
  const int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) {
    dup2(devnull, 0);
    close(devnull);
  }
  signal(SIGPIPE, SIG_IGN);  // onnxdbg gone: writes fail with EPIPE and we exit
#ifdef __GLIBC__
  // One worker loads and runs many sessions (the layerwise batches, isolated nodes), each
  // allocating outputs of megabytes (ONNX Runtime without its arena uses malloc). Keep freed
  // memory in the heap, as the interpreter does, so each session reuses the pages the previous
  // one faulted in: fresh pages cost about 1 ms per MiB on a virtual machine.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif

  Worker w;
  for (;;) {
    worker::Frame req;
    const worker::IoOutcome got = worker::read_frame(in, &req, std::nullopt);
    if (got.result == worker::IoResult::kEof) return 0;
    if (got.result != worker::IoResult::kOk) {
      std::fprintf(stderr, "onnxdbg-worker: %s\n", got.error.c_str());
      return 4;
    }
    nlohmann::json reply = {{"ok", true}};
    TensorMap outputs;
    std::optional<ValueMap> values;  // set by a run_values request that succeeded
    Status st;
    // A streamed run's outputs, each in a frame of its own as soon as the backend gives it.
    worker::IoResult part_result = worker::IoResult::kOk;
    const TensorSink part = [&](const std::string& name, Tensor&& t) {
      if (part_result != worker::IoResult::kOk) return;
      TensorMap one;
      one.emplace(name, std::move(t));
      const worker::IoOutcome o =
          worker::write_frame(out, {{"ok", true}, {"part", true}}, one, std::nullopt);
      part_result = o.result;
      if (o.result != worker::IoResult::kOk && o.result != worker::IoResult::kEof)
        std::fprintf(stderr, "onnxdbg-worker: %s\n", o.error.c_str());
    };
    try {
      st = w.handle(req, &reply, &outputs, &values, part);
    } catch (const std::exception& e) {
      st = internal_error(std::string("onnxdbg-worker: unexpected exception: ") + e.what());
    }
    if (part_result == worker::IoResult::kEof) return 0;
    if (part_result != worker::IoResult::kOk) return 4;  // a part frame is half-written
    if (!st.is_ok()) {
      reply = {{"ok", false}, {"status", worker::status_to_json(st)}};
      outputs.clear();
      values.reset();
    }
    const worker::IoOutcome sent =
        values ? worker::write_value_frame(out, reply, *values, std::nullopt)
               : worker::write_frame(out, reply, outputs, std::nullopt);
    if (sent.result == worker::IoResult::kEof) return 0;
    if (sent.result != worker::IoResult::kOk) {
      std::fprintf(stderr, "onnxdbg-worker: %s\n", sent.error.c_str());
      // The reply could not be encoded (e.g. an output over 2 GiB): say so instead.
      const nlohmann::json err = {
          {"ok", false},
          {"status", worker::status_to_json(backend_error("onnxdbg-worker: " + sent.error))}};
      if (worker::write_frame(out, err, {}, std::nullopt).result != worker::IoResult::kOk) return 4;
    }
  }
}

}  // namespace
}  // namespace onnxdbg

int main() {
  // An exception escaping the worker is a crash to the parent either way; this one says what.
  try {
    return onnxdbg::worker_main();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnxdbg-worker: uncaught exception: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "onnxdbg-worker: uncaught exception\n");
  }
  return 70;  // EX_SOFTWARE
}
