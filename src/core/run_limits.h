// Limits that keep a hostile model from exhausting memory or running forever (issue 17): the
// bytes a tensor needs (overflow-checked), a memory limit checked before large tensors are
// allocated, and a deadline that long loops poll. Memory sizes are parsed and printed here too.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"

namespace onnxdbg {

using Shape = std::vector<int64_t>;  // as core/tensor.h (not included: it is included everywhere)

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

/// Refuses a tensor before it is allocated: OK when a `dtype` tensor of `shape` fits in `limit`
/// bytes (0: default_memory_limit(), read only for tensors of 64 MiB and more, smaller ones always
/// fit), else kInvalidArgument in one sentence naming `what`,
/// e.g. "input 'x' float32[100000,100000,100] needs 3.64 TiB, more than the memory limit of
/// 12.4 GiB (--max-memory)". `what` is how the tensor is known ("input 'x'", "initializer 'w'").
/// Errors also: those of tensor_bytes, with `what` in front.
Status check_tensor_memory(const std::string& what, DType dtype, const Shape& shape,
                           uint64_t limit);

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
};

/// Makes `limits` the ones of this thread for the object's lifetime and restores the previous
/// ones after. The deadline is now + limits.timeout_seconds (when positive); a cancel flag or
/// deadline the enclosing scope had is kept when `limits` has none of its own, and an enclosing
/// deadline that comes sooner wins.
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
