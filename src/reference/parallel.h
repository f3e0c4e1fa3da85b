// Intra-op threads for the reference interpreter's kernels, deterministic by construction: a
// kernel splits its work into chunks fixed by the shapes alone, never by the number of threads,
// and each chunk computes its elements exactly as one thread would. Threads only decide who runs
// which chunk, so every output is the same bit for bit with 1, 2 or 16 threads.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "onnxdbg/status.h"

namespace onnxdbg::reference {

/// Elements per chunk of an elementwise loop (float32: 128 KiB). Loops of fewer than two chunks
/// run inline, so small tensors pay no synchronisation.
inline constexpr int64_t kElementwiseGrain = int64_t{1} << 15;

/// A fixed set of threads that run the chunks of one parallel loop at a time.
class ThreadPool {
 public:
  /// `threads` >= 1 counts the calling thread: ThreadPool(1) starts no thread and runs every
  /// chunk inline. Values below 1 count as 1.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Threads that run chunks, the caller's included.
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls fn(i) once for every i in [0, n), on the calling thread and the pool's, in no
  /// particular order; returns when all calls have returned (the caller runs chunks too and does
  /// not wait for workers that have not woken). The first exception a call throws is rethrown
  /// here once the others have ended (chunks not yet started are skipped). One loop at a time:
  /// calls from several threads at once are serialised.
  void run(int64_t n, const std::function<void(int64_t)>& fn);

 private:
  struct Loop;
  void worker_main();
  static void work(Loop& loop);

  std::vector<std::thread> workers_;
  std::mutex run_mu_;  // one loop at a time
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  std::shared_ptr<Loop> loop_;  // the current loop, for workers that wake
  uint64_t generation_ = 0;
  bool stop_ = false;
};

/// Makes `pool` the one parallel_for uses on this thread for the object's lifetime (the
/// interpreter installs its pool around a run); restores the previous one after. nullptr runs
/// every loop inline.
class ScopedThreadPool {
 public:
  explicit ScopedThreadPool(ThreadPool* pool);
  ~ScopedThreadPool();
  ScopedThreadPool(const ScopedThreadPool&) = delete;
  ScopedThreadPool& operator=(const ScopedThreadPool&) = delete;

 private:
  ThreadPool* previous_;
};

/// Calls fn(i) for every i in [0, n) on this thread's pool (ScopedThreadPool). Runs inline, in
/// order, when there is no pool, it has one thread, n < 2, or the call comes from inside another
/// parallel_for (its chunks are already spread over the threads). Exceptions propagate as from
/// ThreadPool::run. fn must write disjoint memory for distinct i.
void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

/// As parallel_for, for a body that can fail: calls fn(i) for every i in [0, n), failures or
/// not, and returns the Status of the lowest i that failed (OK when none did), so the error
/// reported is the same for every thread count.
Status parallel_for_status(int64_t n, const std::function<Status(int64_t)>& fn);

/// Splits [0, total) into chunks of `grain` items (the last one shorter) and calls
/// fn(begin, end) for each through parallel_for. The chunks depend on total and grain only.
/// grain < 1 counts as 1.
void parallel_range(int64_t total, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

/// Threads of `reference:threads=auto`: the machine's hardware threads, at most 16
/// (std::thread::hardware_concurrency; 1 when it is unknown).
int default_thread_count();

}  // namespace onnxdbg::reference
