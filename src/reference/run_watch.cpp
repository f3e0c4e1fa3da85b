// The process's run watcher (run_watch.h): one thread, started by the first registered run,
// that wakes four times a second and writes a progress line for each run past its first
// kWatchFirstSeconds (or flagged runaway), at most once per kWatchEverySeconds.
#include "reference/run_watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "model/graph.h"

namespace onnxdbg::reference {

namespace {

using Clock = std::chrono::steady_clock;
using ProgressFn = std::function<void(const std::string&)>;

thread_local RunActivity* tl_activity = nullptr;

}  // namespace

struct RunWatch::Watched {
  RunActivity* activity = nullptr;
  const ProgressFn* progress = nullptr;
  Clock::time_point start;
  Clock::time_point last_line;
  bool spoke = false;
  double timeout_seconds = 0;
  uint64_t max_iterations = 0;
};

namespace {

using Watched = RunWatch::Watched;

// "1234567" -> "1,234,567": iteration counts of runaway loops are long.
std::string grouped(int64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > (v < 0 ? 1 : 0); i -= 3)
    s.insert(static_cast<size_t>(i), ",");
  return s;
}

// "Loop 'l'", or "Loop" for an unnamed node.
std::string op_and_name(const onnx::NodeProto& n) {
  return n.op_type() + (n.name().empty() ? "" : " '" + n.name() + "'");
}

// The progress line: where the run is, briefly (a line wider than the terminal cannot be
// redrawn in place).
std::string describe(const Watched& w, Clock::time_point now) {
  const RunActivity& a = *w.activity;
  std::string line = "the reference is at ";
  const onnx::NodeProto* node = a.node.load(std::memory_order_relaxed);
  const onnx::NodeProto* loop = a.loop.load(std::memory_order_relaxed);
  if (node)
    line += "node " + node_label(*node, a.node_index.load(std::memory_order_relaxed));
  else
    line += "its start";
  if (loop) {
    if (loop != node) line += ", in " + op_and_name(*loop);
    line += ", iteration " + grouped(a.iteration.load(std::memory_order_relaxed));
    const int64_t trips = a.trip_count.load(std::memory_order_relaxed);
    if (trips >= 0) line += " of " + grouped(trips);
  }
  const double secs = std::chrono::duration<double>(now - w.start).count();
  if (w.timeout_seconds > 0)
    return line + fmt::format(" ({:.0f} s of --timeout {:g} s)", secs, w.timeout_seconds);
  return line + fmt::format(" ({:.0f} s)", secs);
}

// The note an unbounded run gets once, before its first progress line: what it is doing and how
// to bound it ("note: " makes the CLI print it as a line of its own, kept above the progress).
std::string bound_hint(const Watched& w, Clock::time_point now) {
  const RunActivity& a = *w.activity;
  const onnx::NodeProto* loop = a.loop.load(std::memory_order_relaxed);
  const int64_t trips = a.trip_count.load(std::memory_order_relaxed);
  std::string what;
  if (loop && a.runaway.load(std::memory_order_relaxed) && trips >= 0)
    what = fmt::format("{} may run {} iterations (its trip count; its condition may end it sooner)",
                       op_and_name(*loop), grouped(trips));
  else
    what = fmt::format("the reference has run for {:.0f} s",
                       std::chrono::duration<double>(now - w.start).count());
  return "note: " + what +
         " and nothing bounds this run: stop it with Ctrl-C, or run again with --timeout "
         "SECONDS or --max-iterations N";
}

class Watcher {
 public:
  static Watcher& instance() {
    static Watcher w;
    return w;
  }
  ~Watcher() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void add(Watched* w) {
    std::lock_guard<std::mutex> lock(mu_);
    watched_.push_back(w);
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }
  // Waits for a line being written (the watcher holds mu_ while it calls the callback).
  void remove(Watched* w) {
    std::lock_guard<std::mutex> lock(mu_);
    watched_.erase(std::remove(watched_.begin(), watched_.end(), w), watched_.end());
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(250));
      const auto now = Clock::now();
      for (Watched* w : watched_) {
        const double since_start = std::chrono::duration<double>(now - w->start).count();
        const double since_line = std::chrono::duration<double>(now - w->last_line).count();
        const bool due = since_start >= kWatchFirstSeconds ||
                         w->activity->runaway.load(std::memory_order_relaxed);
        if (!due || (w->spoke && since_line < kWatchEverySeconds)) continue;
        if (!w->spoke && w->timeout_seconds <= 0 && w->max_iterations == 0)
          (*w->progress)(bound_hint(*w, now));
        (*w->progress)(describe(*w, now));
        w->spoke = true;
        w->last_line = now;
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Watched*> watched_;
  std::thread thread_;
  bool stop_ = false;
};

}  // namespace

RunWatch::RunWatch() {
  const RunLimits* limits = current_run_limits();
  if (tl_activity || !limits || !limits->progress || !*limits->progress) return;
  watched_ = std::make_unique<Watched>();
  Watched* w = watched_.get();
  w->activity = &activity_;
  w->progress = limits->progress;
  w->start = Clock::now();
  w->timeout_seconds = limits->timeout_seconds;
  w->max_iterations = limits->max_iterations;
  previous_ = tl_activity;
  tl_activity = &activity_;
  Watcher::instance().add(w);
}

RunWatch::~RunWatch() {
  if (!watched_) return;
  Watcher::instance().remove(watched_.get());
  tl_activity = previous_;
}

RunActivity* current_activity() { return tl_activity; }

Status note_iteration(const onnx::NodeProto& node, int64_t iteration, int64_t trip_count,
                      int64_t body_nodes) {
  const RunLimits* limits = current_run_limits();
  if (limits && limits->max_iterations > 0 &&
      static_cast<uint64_t>(iteration) >= limits->max_iterations)
    return backend_error(
        fmt::format("node '{}' ({}) reached {} iterations, the bound --max-iterations sets{}",
                    node.name(), node.op_type(), limits->max_iterations,
                    trip_count >= 0 ? fmt::format(" (its trip count is {})", trip_count) : ""));
  RunActivity* a = tl_activity;
  if (!a) return Status::ok();
  a->loop.store(&node, std::memory_order_relaxed);
  a->iteration.store(iteration, std::memory_order_relaxed);
  a->trip_count.store(trip_count, std::memory_order_relaxed);
  if (iteration == 0) {
    const bool bounded = limits && (limits->timeout_seconds > 0 || limits->max_iterations > 0);
    if (!bounded && trip_count > 0 &&
        static_cast<double>(trip_count) * static_cast<double>(std::max<int64_t>(body_nodes, 1)) >
            kRunawayWork)
      a->runaway.store(true, std::memory_order_relaxed);
  }
  return Status::ok();
}

void end_iterations(const onnx::NodeProto& node) {
  RunActivity* a = tl_activity;
  if (!a) return;
  const onnx::NodeProto* expected = &node;
  a->loop.compare_exchange_strong(expected, nullptr, std::memory_order_relaxed);
}

}  // namespace onnxdbg::reference
