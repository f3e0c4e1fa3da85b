// Rendering of a LayerwiseReport (`onnxdbg run --layerwise`): a summary per backend, the worst
// tensors with own versus inherited error, where NaN/Inf first appears, and the first divergent
// node; and the JSON keys `layerwise`, `layerwise_summary` and `first_divergent_node`.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "layerwise/layerwise.h"

namespace onnxdbg::report {

/// Prints the layerwise section: per-backend summary, the `top` worst failing tensors per backend
/// (ranked by own error where isolated, else total error), notes, NaN/Inf and float16-range
/// findings, and the first divergent node with its repro folder.
void print_layerwise_report(const LayerwiseReport& rep, std::ostream& os, bool color,
                            size_t top = 10);

/// Adds to `j` (the run report object): "layerwise" (one entry per tensor and backend),
/// "layerwise_summary" (per backend, "worst": every failing tensor {tensor, node, node_index,
/// error_source} in the order the text report ranks them, which the HTML page shows too) and
/// "first_divergent_node" (null when none diverges).
void add_layerwise_json(const LayerwiseReport& rep, nlohmann::json& j);

}  // namespace onnxdbg::report
