// How onnxdbg generates model inputs when none are given (the CLI's --seed, --val-range,
// --input-shapes): the options of every API call that runs a model on generated values (`run`,
// `run_backend`, `reduce`). src/comparator/input_gen.h generates them (SplitMix64: the same values
// on every machine).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onnxdbg/options.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// Value range [low, high] for generated values (integers: inclusive; bool: any value in [0,1]).
struct ValueRange {
  double low = 0.0;
  double high = 1.0;
};

/// How inputs are generated: the seed, value ranges and the sizes of dynamic dimensions.
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

}  // namespace onnxdbg
