// Fuzz target: .npz archive bytes through read_npz (libzip, then read_npy per entry), as
// `run --load-inputs x.npz` and `--load-outputs` read them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "data/npz.h"
#include "fuzz_limits.h"

using namespace onnxdbg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ScopedRunLimits limits(fuzz_limits());
  (void)read_npz(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input");
  return 0;
}
