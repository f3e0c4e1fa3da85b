// The limits every fuzz target runs under, as `--max-memory 512MiB --timeout 10` set them for a
// user: a hostile input that makes onnxdbg allocate or run past what the user allowed is a finding
// (libFuzzer's -malloc_limit_mb and -timeout in run.sh catch it); one refused in words is not.
#pragma once

#include "core/run_limits.h"

inline onnxdbg::RunLimits fuzz_limits() {
  onnxdbg::RunLimits limits;
  limits.max_memory = uint64_t{512} << 20;
  limits.timeout_seconds = 10;
  return limits;
}
