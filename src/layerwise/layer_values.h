// Every intermediate tensor of one float32 reference run, for `run --layerwise --save-outputs`
// (Polygraphy's `--onnx-outputs mark all --save-outputs`): the golden values of every layer, so
// `onnxdbg data to-input` can merge them with the inputs for a later run or a bug report.
#pragma once

#include <cstdint>
#include <filesystem>

#include "backends/backend.h"
#include "model/model.h"
#include "onnxdbg/status.h"
#include "reference/interpreter.h"

namespace onnxdbg {

/// Runs `model` once on the reference interpreter with `inputs` and returns
/// every tensor a main-graph node produces (graph outputs included), by name; tensors of
/// subgraphs are not included. `budget_bytes` bounds the total size held: a run whose tensors
/// need more stops with an error before anything is returned. `options`: how the reference runs
/// (its accumulation precision, say).
/// Errors: kInvalidArgument "... need more than --layerwise-memory ..." over budget; those of
/// reference::Interpreter::create and run.
Expected<TensorMap> reference_layer_values(const LoadedModel& model, const TensorMap& inputs,
                                           uint64_t budget_bytes,
                                           const reference::InterpreterOptions& options = {});

/// Runs `model` once on `backend` with every main-graph node output named in `types` (name -> a
/// tensor of its dtype, e.g. reference_layer_values' result) added as a graph output, and
/// returns them all with the graph outputs, by name: the backend's own values of every layer
/// (ONNX Runtime's extra outputs, as the layerwise pass asks for them). The model is written to
/// a folder in the system's temp folder (external data linked, not copied).
/// Errors: those of writing the model, the backend's load and run (kBackendError).
Expected<TensorMap> backend_layer_values(const LoadedModel& model, Backend& backend,
                                         const TensorMap& inputs, const TensorMap& types);

}  // namespace onnxdbg
