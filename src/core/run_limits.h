// Limits that keep a hostile model from exhausting memory or running forever (issue 17): the
// bytes a tensor needs (overflow-checked), a memory limit checked before large tensors are
// allocated, and a deadline that long loops poll. Memory sizes are parsed and printed here too.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "onnxdbg/dtype.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

// As onnxdbg/tensor.h's (not included: this header is included everywhere).
using Shape = std::vector<int64_t>;

/// Parses a memory size: "2GiB", "512MiB", "1.5GB", "65536" (bytes), "64k". Binary and decimal
/// units (KiB/MiB/GiB/TiB = 2^10.., KB/MB/GB/TB and k/M/G/T = 10^3..), case-insensitive.
/// Errors: kInvalidArgument for anything else, zero, or more than 2^60 bytes.
Expected<uint64_t> parse_memory_size(const std::string& text);
/// "2 GiB", "512 MiB", "1.5 KiB", "12 B" (up to EiB).
std::string memory_size_string(uint64_t bytes);

/// Bytes of the buffer of a `dtype` tensor of `shape` (a string tensor counts sizeof(std::string)
/// per element, its characters aside). Errors: kInvalidArgument for a negative dimension, or an
/// element or byte count that does not fit in 64 bits.
Expected<uint64_t> tensor_bytes(DType dtype, const Shape& shape);
/// "float32[100000,100000,100]" ("float32[]" for a scalar).
std::string tensor_type_string(DType dtype, const Shape& shape);

/// The memory limit when none is given (--max-memory's default): 80% of the memory the kernel
/// reports available now (MemAvailable in /proc/meminfo), else of the physical memory
/// (sysconf), else 16 GiB. Read afresh on every call (a few microseconds).
uint64_t default_memory_limit();

/// What the kernel lets this process map, and what it maps now, in bytes (kNoMemoryLimit where
/// there is no limit): the address-space limit (RLIMIT_AS, `ulimit -v`) against VmSize, the data
/// limit (RLIMIT_DATA, `ulimit -d`) against VmData, and the memory cgroup's limit (cgroup v2
/// `memory.max` of this process's cgroup and its ancestors, or v1 `memory.limit_in_bytes`)
/// against its current use (`memory.current`, `memory.usage_in_bytes`).
inline constexpr uint64_t kNoMemoryLimit = UINT64_MAX;
struct ProcessMemoryFacts {
  uint64_t address_space_limit = kNoMemoryLimit;
  uint64_t address_space_used = 0;
  uint64_t data_limit = kNoMemoryLimit;
  uint64_t data_used = 0;
  uint64_t cgroup_limit = kNoMemoryLimit;
  uint64_t cgroup_used = 0;
  const char* cgroup_limit_file = "memory.max";  ///< "memory.limit_in_bytes" under cgroup v1
};
/// Reads ProcessMemoryFacts from getrlimit, /proc/self/status, /proc/self/cgroup and
/// /sys/fs/cgroup (a few file reads, ~50 us). Files it cannot read count as no limit.
ProcessMemoryFacts read_process_memory_facts();

/// The bytes this process can still allocate, and the limit that says so.
struct MemoryRoom {
  uint64_t bytes = kNoMemoryLimit;  ///< kNoMemoryLimit: no limit applies
  /// The binding limit in words, for messages: "its address-space limit of 4 GiB (ulimit -v)",
  /// "its data limit of 2 GiB (ulimit -d)", "its cgroup's memory limit of 4 GiB (memory.max)";
  /// empty when bytes is kNoMemoryLimit.
  std::string limit;
};
/// The smallest room the `facts` leave (limit minus use, 0 when use is already above the limit).
MemoryRoom memory_room(const ProcessMemoryFacts& facts);

/// Refuses a tensor before it is allocated: OK when a `dtype` tensor of `shape` fits in the
/// effective limit, else kInvalidArgument in one sentence naming `what`. The effective limit is
/// the smaller of `limit` (0: default_memory_limit()) and what the process can still allocate
/// (memory_room of read_process_memory_facts), both read only for tensors of 64 MiB and more
/// (smaller ones always fit). The sentence names the binding limit:
/// "input 'x' float32[100000,100000,100] needs 3.64 TiB, more than the memory limit of
/// 12.4 GiB (--max-memory)", or "input 'x' float32[2,1024,1024,1024] needs 8 GiB, more than the
/// 3.6 GiB this process can still allocate under its address-space limit of 3.81 GiB
/// (ulimit -v)". `what` is how the tensor is known ("input 'x'", "initializer 'w'").
/// Errors also: those of tensor_bytes, with `what` in front.
Status check_tensor_memory(const std::string& what, DType dtype, const Shape& shape,
                           uint64_t limit);

/// The sentence for an allocation that failed anyway (std::bad_alloc out of a kernel or a
/// library): "out of memory: <what> could not be allocated (this process can still allocate
/// 1.2 GiB under its address-space limit of 4 GiB (ulimit -v))", or "... (X of memory is
/// available)" when no limit of the process binds. `what` says what was being made ("an output
/// of this node").
std::string out_of_memory_message(const std::string& what);

/// What a run of the reference interpreter may use: a memory limit per tensor and a deadline.
/// Installed for a thread with ScopedRunLimits; Tensor::make/make_uninitialized check every
/// tensor against its memory limit (check_tensor_memory, also with no limits installed: then the
/// default), long loops poll run_should_stop().
struct RunLimits {
  /// Bytes one tensor may take; 0: default_memory_limit(), read when a tensor of 64 MiB or more
  /// is made.
  uint64_t max_memory = 0;
  /// Seconds the run may take from the moment the limits were installed; 0: no deadline.
  double timeout_seconds = 0;
  /// The moment the run must stop (set by ScopedRunLimits from timeout_seconds).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// A flag another thread sets to stop the run (api::CancelToken::flag()); may be null.
  const std::atomic<bool>* cancel = nullptr;
  /// Iterations one Loop or Scan node may run (`--max-iterations`, `reference:max_iterations=`);
  /// 0: no bound. A Loop reaching it fails with kBackendError naming the node; a Scan longer than
  /// it is refused before its first iteration.
  uint64_t max_iterations = 0;
  /// Where a run that takes long says what it is doing (api::CallContext::progress: the CLI's
  /// progress line, shown only on a terminal and never with --json); may be null. The reference
  /// interpreter's RunWatch (reference/run_watch.h) calls it from its own thread.
  const std::function<void(const std::string&)>* progress = nullptr;
};

/// Makes `limits` the ones of this thread for the object's lifetime and restores the previous
/// ones after. The deadline is now + limits.timeout_seconds (when positive); a cancel flag,
/// progress callback, iteration bound or deadline the enclosing scope had is kept when `limits`
/// has none of its own, and an enclosing deadline that comes sooner wins.
class ScopedRunLimits {
 public:
  explicit ScopedRunLimits(RunLimits limits);
  /// Installs another thread's limits as they are (the chunks of a parallel loop run under the
  /// limits of the thread that started it); `shared` may be null and must outlive this object.
  explicit ScopedRunLimits(const RunLimits* shared);
  ~ScopedRunLimits();
  ScopedRunLimits(const ScopedRunLimits&) = delete;
  ScopedRunLimits& operator=(const ScopedRunLimits&) = delete;

 private:
  RunLimits limits_;
  const RunLimits* previous_;
};

/// The limits installed on this thread, or nullptr.
const RunLimits* current_run_limits();

/// Whether this thread's run must stop now: its deadline passed or its cancel flag is set. Cheap
/// (a clock read): long loops call it once per row or chunk and break out; the interpreter then
/// reports check_run_limits()' error for the node.
bool run_should_stop();

/// OK while the run may go on; else kBackendError "timed out after N s" (deadline) or
/// kCancelled "cancelled" (the flag).
Status check_run_limits();

}  // namespace onnxdbg
