// Tensor sizes, the memory limit and the run deadline of core/run_limits.h.
#include "core/run_limits.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <sstream>

namespace onnxdbg {

namespace {
thread_local const RunLimits* current_limits = nullptr;
}  // namespace

Expected<uint64_t> tensor_bytes(DType dtype, const Shape& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return invalid_argument("negative dimension " + std::to_string(d) + " in shape " +
                              tensor_type_string(dtype, shape));
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return invalid_argument(tensor_type_string(dtype, shape) +
                              " has more elements than 64 bits can count");
  }
  const uint64_t esize = dtype == DType::kString ? sizeof(std::string) : dtype_size(dtype);
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(n, esize, &bytes))
    return invalid_argument(tensor_type_string(dtype, shape) +
                            " needs more bytes than 64 bits can count");
  return bytes;
}

std::string tensor_type_string(DType dtype, const Shape& shape) {
  std::string s(dtype_name(dtype));
  s += '[';
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ']';
}

uint64_t default_memory_limit() {
  // MemAvailable counts what can be had without swapping (page cache included); MemTotal-style
  // physical memory is the fallback for kernels without it.
  uint64_t avail = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream is(line.substr(13));
    uint64_t kib = 0;
    if (is >> kib) avail = kib * 1024;
    break;
  }
  if (avail == 0) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) avail = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  }
  if (avail == 0) avail = uint64_t{16} << 30;
  return avail / 5 * 4;
}

Status check_tensor_memory(const std::string& what, DType dtype, const Shape& shape,
                           uint64_t limit) {
  auto bytes = tensor_bytes(dtype, shape);
  if (!bytes) return invalid_argument(what + " " + bytes.status().message());
  if (*bytes < (uint64_t{64} << 20)) {
    if (limit == 0 || *bytes <= limit) return Status::ok();
  } else {
    if (limit == 0) limit = default_memory_limit();
    // What the kernel will let this process map binds before --max-memory does when smaller
    // (`ulimit -v`, a container's cgroup): the allocation would fail with std::bad_alloc.
    const MemoryRoom room = memory_room(read_process_memory_facts());
    if (room.bytes<limit&& * bytes> room.bytes)
      return invalid_argument(
          fmt::format("{} {} needs {}, more than the {} this process can still allocate under {}",
                      what, tensor_type_string(dtype, shape), memory_size_string(*bytes),
                      memory_size_string(room.bytes), room.limit));
    if (*bytes <= limit) return Status::ok();
  }
  return invalid_argument(
      fmt::format("{} {} needs {}, more than the memory limit of {} "
                  "(--max-memory)",
                  what, tensor_type_string(dtype, shape), memory_size_string(*bytes),
                  memory_size_string(limit)));
}

std::string out_of_memory_message(const std::string& what) {
  const MemoryRoom room = memory_room(read_process_memory_facts());
  if (room.bytes != kNoMemoryLimit)
    return fmt::format(
        "out of memory: {} could not be allocated (this process can still allocate {} under {})",
        what, memory_size_string(room.bytes), room.limit);
  return fmt::format("out of memory: {} could not be allocated ({} of memory is available)", what,
                     memory_size_string(default_memory_limit() / 4 * 5));
}

ScopedRunLimits::ScopedRunLimits(RunLimits limits) : limits_(limits), previous_(current_limits) {
  if (limits_.timeout_seconds > 0) {
    const auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(limits_.timeout_seconds));
    limits_.deadline = std::chrono::steady_clock::now() + timeout;
  }
  if (previous_) {
    if (!limits_.cancel) limits_.cancel = previous_->cancel;
    if (previous_->deadline < limits_.deadline) {
      limits_.deadline = previous_->deadline;
      limits_.timeout_seconds = previous_->timeout_seconds;
    }
    if (limits_.max_memory == 0) limits_.max_memory = previous_->max_memory;
    if (limits_.max_iterations == 0) limits_.max_iterations = previous_->max_iterations;
    if (!limits_.progress) limits_.progress = previous_->progress;
  }
  current_limits = &limits_;
}

ScopedRunLimits::ScopedRunLimits(const RunLimits* shared) : previous_(current_limits) {
  current_limits = shared;
}

ScopedRunLimits::~ScopedRunLimits() { current_limits = previous_; }

const RunLimits* current_run_limits() { return current_limits; }

bool run_should_stop() {
  const RunLimits* l = current_limits;
  if (!l) return false;
  if (l->cancel && l->cancel->load(std::memory_order_relaxed)) return true;
  return l->deadline != std::chrono::steady_clock::time_point::max() &&
         std::chrono::steady_clock::now() >= l->deadline;
}

Status check_run_limits() {
  const RunLimits* l = current_limits;
  if (!l) return Status::ok();
  if (l->cancel && l->cancel->load(std::memory_order_relaxed)) return cancelled("cancelled");
  if (l->deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() >= l->deadline)
    return backend_error(fmt::format("timed out after {:g} s", l->timeout_seconds));
  return Status::ok();
}

}  // namespace onnxdbg
