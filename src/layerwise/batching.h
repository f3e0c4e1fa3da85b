// Private to the layerwise module: the compared tensors cut into batches, runs of consecutive
// tensors (topological order) that one backend run returns together under the memory budget.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layerwise/layerwise.h"

namespace onnxdbg::layerwise_detail {

/// Tensors [begin, end) of LayerwiseReport::tensors and the bytes their copies take together.
struct Batch {
  size_t begin = 0, end = 0;
  uint64_t bytes = 0;
};

/// Consecutive `tensors` in as few batches as `max_bytes` bytes and `max_tensors` tensors per
/// batch allow, with their bytes spread as evenly as that count allows: the backend's first run
/// faults in fresh memory for its whole batch (1-3 ms per MiB on a virtual machine), later runs
/// reuse it, so a smaller largest batch costs less. A tensor larger than `max_bytes` gets a batch
/// of its own.
std::vector<Batch> make_batches(const std::vector<LayerTensor>& tensors, uint64_t max_bytes,
                                size_t max_tensors);

/// Greedy: a batch ends when the next tensor would take it over `max_bytes` or `max_tensors`.
std::vector<Batch> greedy_batches(const std::vector<LayerTensor>& tensors, uint64_t max_bytes,
                                  size_t max_tensors);

/// The names of the batch's tensors, in order.
std::vector<std::string> batch_names(const std::vector<LayerTensor>& tensors, const Batch& b);

}  // namespace onnxdbg::layerwise_detail
