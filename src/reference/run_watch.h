// A reference run that takes long says what it is doing (issue 39): the interpreter records the
// node it runs and the Loop/Scan iteration it is in (RunActivity, a few relaxed atomic stores),
// and one watcher thread per process turns that into a progress line after 10 s, naming the
// node, the iteration and how to bound the run when nothing bounds it. Loop/Scan iterations are
// also where --max-iterations is enforced.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/onnx.h"
#include "core/run_limits.h"
#include "onnxdbg/status.h"

namespace onnxdbg::reference {

/// What one run is doing now: written by the thread running it, read by the watcher.
struct RunActivity {
  std::atomic<const onnx::NodeProto*> node{nullptr};  ///< the main-graph node running
  std::atomic<int64_t> node_index{-1};                ///< its index in the main graph
  std::atomic<const onnx::NodeProto*> loop{nullptr};  ///< the innermost Loop/Scan running
  std::atomic<int64_t> iteration{0};                  ///< its current iteration, 0-based
  std::atomic<int64_t> trip_count{-1};                ///< its iterations at most; -1: unknown
  /// Set by a Loop/Scan whose trip count times body size is beyond kRunawayWork with nothing
  /// bounding the run: the watcher speaks at once instead of after 10 s.
  std::atomic<bool> runaway{false};
};

/// Body nodes times iterations above which a Loop/Scan without a bound is announced at once.
inline constexpr double kRunawayWork = 1e9;
/// Seconds a run goes before the watcher's first line, and between its lines.
inline constexpr double kWatchFirstSeconds = 10;
inline constexpr double kWatchEverySeconds = 1;

/// Registers this thread's run with the process's watcher for the object's lifetime, when the
/// installed RunLimits (core/run_limits.h) have a progress callback; else does nothing. While
/// registered, the watcher calls that callback from its own thread (at most once a second, from
/// kWatchFirstSeconds on, or at once for a runaway Loop): "the reference is at node #2 Loop
/// 'spin', iteration 1,234,567 of 4,611,686,018,427,387,904 (10 s)", preceded once, when neither
/// a timeout nor an iteration bound is set, by a line starting "note: " ("note: Loop 'spin' may
/// run 4,611,686,018,427,387,904 iterations (...) and nothing bounds this run: stop it with
/// Ctrl-C, or run again with --timeout SECONDS or --max-iterations N"), which the CLI prints as a
/// line of its own. The destructor waits for a line being written, so the callback never
/// outlives the run. Nested runs (a function body, a
/// subgraph) find the enclosing registration and leave it alone.
class RunWatch {
 public:
  RunWatch();
  ~RunWatch();
  RunWatch(const RunWatch&) = delete;
  RunWatch& operator=(const RunWatch&) = delete;
  struct Watched;  ///< the watcher's record of this run

 private:
  RunActivity activity_;
  RunActivity* previous_ = nullptr;
  std::unique_ptr<Watched> watched_;  ///< null when not registered
};

/// This thread's RunActivity (the innermost registered run), or nullptr: written by the
/// interpreter's node loop.
RunActivity* current_activity();

/// Records that main-graph node `index` runs now (nothing when `activity` is null).
inline void note_node(RunActivity* activity, const onnx::NodeProto& node, size_t index) {
  if (!activity) return;
  activity->node.store(&node, std::memory_order_relaxed);
  activity->node_index.store(static_cast<int64_t>(index), std::memory_order_relaxed);
}

/// Marks iteration `iteration` (0-based) of the Loop or Scan `node` about to run: recorded for
/// the watcher, and checked against RunLimits::max_iterations. `trip_count`: iterations the node
/// will run at most (-1: unknown), `body_nodes`: nodes of its body. At iteration 0 a node whose
/// trip_count x body_nodes exceeds kRunawayWork, with no timeout and no iteration bound, is
/// flagged to the watcher. Errors: kBackendError "node 'l' (Loop) reached 1000 iterations, the
/// bound --max-iterations sets" once `iteration` reaches the bound.
Status note_iteration(const onnx::NodeProto& node, int64_t iteration, int64_t trip_count,
                      int64_t body_nodes);

/// Marks the end of the Loop or Scan `node` (the watcher's line goes back to the node alone).
void end_iterations(const onnx::NodeProto& node);

}  // namespace onnxdbg::reference
