// Structural difference between two ONNX models: nodes matched by name, then by op type and
// position; nodes only in one model; changed op types, attributes, input wiring; initializers
// (dtype, shape, value statistics); graph inputs and outputs; opset imports. A one-sentence
// summary leads ("B lacks 37 nodes downstream of #12 Conv '/backbone/stage4'; its output 'pos'
// is produced by no node"). Nodes are named with node_label (model/graph.h).
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include "onnxdbg/model_diff.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

/// Compares the main graphs of `a` and `b`, and the subgraphs (If's branches, Loop's and Scan's
/// bodies, nested ones too) of each matched node pair the same way: their nodes are matched, and
/// their changes (nodes only on one side, op types, attributes, wiring, initializers, inputs and
/// outputs) go to `changed`, named by path ("main/If_0:then_branch/#3 Conv 'c'", subgraph_path)
/// and recorded on the main-graph node that owns the subgraph. Initializer values and tensor
/// attributes (Constant's value) are read (external data included) to give how many values differ
/// and the max absolute difference where dtype and shape agree. Errors: kModelError when an
/// initializer cannot be read.
Expected<ModelDiff> diff_models(const LoadedModel& a, const LoadedModel& b);

}  // namespace onnxdbg
