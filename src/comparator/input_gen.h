// Generating model inputs: shapes from the model's declared signature with dynamic dimensions
// filled from --input-shapes, values drawn from a seeded generator within --val-range.
// Values are reproducible across machines: the generator is SplitMix64, not <random>'s
// implementation-defined distributions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "model/model.h"
#include "onnxdbg/input_gen.h"
#include "onnxdbg/options.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

/// The concrete shape for a graph input: the override if given (checked against static dims),
/// else the declared shape. Errors: kInvalidArgument naming the input and the dynamic dimension
/// (by its symbolic name and axis) when a dim is unknown and no override gives it, or when an
/// override contradicts a static dim or the rank.
Expected<Shape> resolve_input_shape(const ValueSignature& sig, const InputGenOptions& options);

/// Generates every graph input (that has no initializer) of `graph`. Each input gets its own
/// stream derived from the seed and its name, so adding an input does not change the others.
/// Values are uniform in the input's range (integers: whole numbers in it); for the narrow types
/// (float8, float4, float6, int4, int2, ...) the range is first clamped to the type's finite
/// values and each value is rounded to the type as Tensor::set_from_double does.
/// Errors: as resolve_input_shape; kUnsupported for string or non-tensor inputs; kInvalidArgument
/// for --input-shapes/--val-range names that are not inputs of the model, or for an input larger
/// than options.max_memory (one sentence naming it, its type and size; nothing is allocated).
Expected<TensorMap> generate_inputs(const onnx::GraphProto& graph, const InputGenOptions& options);

}  // namespace onnxdbg
