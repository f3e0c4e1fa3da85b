// Batches of the layerwise pass (see batching.h): as few backend runs as the memory budget and
// the extra-output cap allow, with their bytes spread evenly.
#include "layerwise/batching.h"

#include <algorithm>

namespace onnxdbg::layerwise_detail {

std::vector<Batch> make_batches(const std::vector<LayerTensor>& tensors, uint64_t max_bytes,
                                size_t max_tensors) {
  std::vector<Batch> fewest = greedy_batches(tensors, max_bytes, max_tensors);
  uint64_t total = 0, largest = 0;
  for (const auto& t : tensors) {
    total += t.bytes;
    largest = std::max(largest, t.bytes);
  }
  // The smallest byte limit, from an even share up, that still needs no more batches.
  const uint64_t even = std::max(largest, total / std::max<size_t>(1, fewest.size()));
  for (uint64_t cap = even; cap < max_bytes;
       cap += std::max<uint64_t>(1, (max_bytes - even) / 16)) {
    std::vector<Batch> b = greedy_batches(tensors, cap, max_tensors);
    if (b.size() <= fewest.size()) return b;
  }
  return fewest;
}

std::vector<Batch> greedy_batches(const std::vector<LayerTensor>& tensors, uint64_t max_bytes,
                                  size_t max_tensors) {
  std::vector<Batch> batches;
  Batch cur;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const uint64_t b = tensors[i].bytes;
    if (cur.end > cur.begin && (cur.bytes + b > max_bytes || cur.end - cur.begin >= max_tensors)) {
      batches.push_back(cur);
      cur = Batch{i, i, 0};
    }
    cur.end = i + 1;
    cur.bytes += b;
  }
  if (cur.end > cur.begin) batches.push_back(cur);
  return batches;
}

std::vector<std::string> batch_names(const std::vector<LayerTensor>& tensors, const Batch& b) {
  std::vector<std::string> names;
  for (size_t i = b.begin; i < b.end; ++i) names.push_back(tensors[i].name);
  return names;
}

}  // namespace onnxdbg::layerwise_detail
