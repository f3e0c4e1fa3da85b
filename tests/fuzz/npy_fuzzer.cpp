// Fuzz target: .npy bytes through read_npy (also the reader of every .npz entry and of Polygraphy
// JSON's base64 arrays), and a successful read written back and read again unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "data/npy.h"
#include "fuzz_limits.h"

using namespace onnxdbg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ScopedRunLimits limits(fuzz_limits());
  auto t = read_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input");
  if (!t) return 0;
  // bfloat16 is written widened to float32 (write_npy); every other type round-trips.
  if (t->dtype() == DType::kBFloat16) return 0;
  const std::string again = write_npy(*t);
  auto back = read_npy(again, "rewritten fuzz input");
  if (!back || back->dtype() != t->dtype() || back->shape() != t->shape()) std::abort();
  return 0;
}
