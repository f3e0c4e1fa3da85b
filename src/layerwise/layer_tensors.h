// Private to the layerwise module: the first reference run (or the loaded golden values), which
// finds the intermediate tensors to compare, how much memory a copy of each takes, and what its
// golden value holds.
#pragma once

#include <cstdint>
#include <vector>

#include "layerwise/layerwise.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg::layerwise_detail {

class GoldenSource;
class GoldenStore;

/// Bytes a copy of `t` takes in memory: its buffer as allocate_tensor_bytes (onnxdbg/tensor.h)
/// allocates it, in whole 2 MiB huge pages from 2 MiB on (each is faulted in whole); strings:
/// their characters plus one std::string each.
uint64_t tensor_bytes(const Tensor& t);

struct FloatScan {
  int64_t nonfinite = 0;  ///< NaN and Inf elements
  float max_abs = 0;      ///< largest finite |value| (0 if none)
};

/// NaN/Inf count and largest finite |value| of `n` float32 values at `p`, in one pass.
FloatScan scan_floats(const float* p, int64_t n);

/// Fills rep->tensors with every main-graph node output except those of Constant nodes, in
/// topological order, with its size and golden statistics: from one reference run over the
/// whole model, or, when `src` holds loaded golden values, from those (no reference run), the
/// outputs without one going to rep->no_golden. With `store`, the reference run's values go into
/// it (each compared tensor as rep->tensors' index, Constant nodes' outputs beside them); sealed
/// by the caller. Errors: the reference's; kInvalidArgument when
/// a tensor takes more than `batch_limit` bytes (the budget `memory_budget` / kLayerwiseCopies;
/// the message names the first such tensor and the budget it needs), or when a loaded value's
/// dtype or a dimension that shape inference knows differs from the model's (named after
/// rep->golden_source).
Status collect_layer_tensors(GoldenSource& src, uint64_t batch_limit, uint64_t memory_budget,
                             LayerwiseReport* rep, GoldenStore* store = nullptr);

}  // namespace onnxdbg::layerwise_detail
