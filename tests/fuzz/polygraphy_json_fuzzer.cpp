// Fuzz target: Polygraphy JSON text (input lists and RunResults) through parse_polygraphy_json,
// as `run --load-inputs x.json` and `--load-outputs` read them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "data/polygraphy_json.h"
#include "fuzz_limits.h"

using namespace onnxdbg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ScopedRunLimits limits(fuzz_limits());
  (void)parse_polygraphy_json(std::string_view(reinterpret_cast<const char*>(data), size),
                              "fuzz input");
  return 0;
}
