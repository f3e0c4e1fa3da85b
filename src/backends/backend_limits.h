// --timeout, --max-memory and --max-iterations as backend options: one place that writes them onto
// the backends a command runs, so `run` (its layerwise pass included) and `reduce` treat them
// alike.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend.h"

namespace onnxdbg {

/// Sets `timeout=SECONDS` on every backend of `specs` without a timeout= of its own (when
/// timeout_seconds > 0: the reference's run deadline, the isolated backends' load and run
/// limits) and `max_memory=BYTES` on every reference backend without its own (when max_memory
/// > 0) and `max_iterations=N` likewise (when max_iterations > 0). Options a spec already has
/// win.
void apply_backend_limits(std::vector<BackendSpec>& specs, double timeout_seconds,
                          uint64_t max_memory, uint64_t max_iterations = 0);

}  // namespace onnxdbg
