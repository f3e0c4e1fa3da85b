// ThreadPool and parallel_for for the reference kernels. Chunks are handed out through an atomic
// counter, so a thread that finishes early takes the next one; which thread runs a chunk never
// changes what the chunk computes.
#include "reference/parallel.h"

#include <algorithm>
#include <atomic>

#include "core/run_limits.h"

namespace onnxdbg::reference {

// One parallel loop. Workers hold it by shared_ptr: a worker that wakes after every chunk is done
// finds none left and lets go of it, while the caller has already returned.
struct ThreadPool::Loop {
  ThreadPool* pool = nullptr;
  const std::function<void(int64_t)>* fn = nullptr;  // valid until `done` reaches n
  int64_t n = 0;
  std::atomic<int64_t> next{0};  // the next chunk to hand out
  std::atomic<int64_t> done{0};  // chunks finished (or skipped after an error)
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  std::exception_ptr error;
  const RunLimits* limits = nullptr;  // the caller's, for Tensor::make and run_should_stop
};

namespace {
thread_local ThreadPool* current_pool = nullptr;
thread_local bool inside_loop = false;
}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_main(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::work(Loop& loop) {
  inside_loop = true;
  for (int64_t i; (i = loop.next.fetch_add(1)) < loop.n;) {
    if (!loop.failed.load(std::memory_order_relaxed)) {
      try {
        (*loop.fn)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(loop.error_mu);
        if (!loop.error) loop.error = std::current_exception();
        loop.failed = true;  // the chunks not yet started are skipped
      }
    }
    if (loop.done.fetch_add(1) + 1 == loop.n) {
      // Under mu_, so that the caller cannot miss it between its check and its wait.
      std::lock_guard<std::mutex> lock(loop.pool->mu_);
      loop.pool->done_cv_.notify_all();
    }
  }
  inside_loop = false;
}

void ThreadPool::worker_main() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    std::shared_ptr<Loop> loop = loop_;
    if (!loop) continue;  // woke after the loop ended: nothing left to do
    lock.unlock();
    {
      ScopedRunLimits limits(loop->limits);
      work(*loop);
    }
    loop.reset();
    lock.lock();
  }
}

void ThreadPool::run(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::lock_guard<std::mutex> serial(run_mu_);
  auto loop = std::make_shared<Loop>();
  loop->pool = this;
  loop->fn = &fn;
  loop->n = n;
  loop->limits = current_run_limits();
  {
    std::lock_guard<std::mutex> lock(mu_);
    loop_ = loop;
    ++generation_;
  }
  start_cv_.notify_all();
  // The caller takes chunks too, and waits only for chunks that a worker has started: a worker
  // that is slow to wake (the machine is busy) costs nothing.
  work(*loop);
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return loop->done.load() == n; });
    loop_.reset();
  }
  if (loop->error) std::rethrow_exception(loop->error);
}

ScopedThreadPool::ScopedThreadPool(ThreadPool* pool) : previous_(current_pool) {
  current_pool = pool;
}

ScopedThreadPool::~ScopedThreadPool() { current_pool = previous_; }

void parallel_for(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n < 2 || !current_pool || current_pool->threads() < 2 || inside_loop) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  current_pool->run(n, fn);
}

Status parallel_for_status(int64_t n, const std::function<Status(int64_t)>& fn) {
  std::mutex mu;
  int64_t first = n;
  Status error;
  parallel_for(n, [&](int64_t i) {
    Status st = fn(i);
    if (st.is_ok()) return;
    std::lock_guard<std::mutex> lock(mu);
    if (i < first) {
      first = i;
      error = std::move(st);
    }
  });
  return error;
}

void parallel_range(int64_t total, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (total <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = (total + grain - 1) / grain;
  // Waking a thread costs about as much as a few chunks of elementwise work, so loops of fewer
  // than kMinChunksToShare chunks run their chunks here, in order. The chunks are the same.
  constexpr int64_t kMinChunksToShare = 4;
  if (chunks < kMinChunksToShare) {
    for (int64_t c = 0; c < chunks; ++c) fn(c * grain, std::min(total, (c + 1) * grain));
    return;
  }
  parallel_for(chunks, [&](int64_t c) { fn(c * grain, std::min(total, (c + 1) * grain)); });
}

int default_thread_count() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(std::min(hw, 16u));
}

}  // namespace onnxdbg::reference
