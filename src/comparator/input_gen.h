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
#include "onnxdbg/options.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

/// Value range [low, high] for generated values (integers: inclusive; bool: any value in [0,1]).
struct ValueRange {
  double low = 0.0;
  double high = 1.0;
};

struct InputGenOptions {
  uint64_t seed = option_defaults::seed;
  ValueRange default_range;                  ///< for inputs without their own range
  std::map<std::string, ValueRange> ranges;  ///< by input name
  std::map<std::string, Shape> shapes;       ///< overrides by input name (--input-shapes)
  /// Bytes one generated input may take (--max-memory); 0: default_memory_limit() (80% of the
  /// memory available, core/run_limits.h). Checked before the input is allocated.
  uint64_t max_memory = 0;
};

/// Parses --input-shapes values "name:1x3x224x224" or Polygraphy's "name:[1,3,224,224]"
/// (a scalar is "name:[]"; the last ':' separates, so names with ':' work), one per value or
/// several in one value separated by commas outside brackets ("x:1x3,y:[1,5]").
/// Errors: kInvalidArgument naming the bad entry.
Status parse_input_shapes(const std::vector<std::string>& args, std::map<std::string, Shape>& out);

/// Parses --val-range values "low,high" / "[low,high]" (default for all inputs) or
/// "name:[low,high]". Errors: kInvalidArgument when low > high or not numbers.
Status parse_value_ranges(const std::vector<std::string>& args, InputGenOptions& out);

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
