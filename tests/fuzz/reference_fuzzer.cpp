// Fuzz target: a small model run on the reference interpreter with generated inputs (dynamic dims
// set to 2; inputs over 4,096 elements skipped), as `onnxdbg run --backends reference` runs it.
// Mutated attributes, shapes and initializers reach the kernels: each must refuse in words.
#include <cstddef>
#include <cstdint>
#include <string>

#include "comparator/input_gen.h"
#include "fuzz_limits.h"
#include "model/model.h"
#include "reference/interpreter.h"

using namespace onnxdbg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ScopedRunLimits limits(fuzz_limits());
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto model = parse_model(bytes, "/nonexistent/onnxdbg-fuzz", "fuzz input");
  if (!model) return 0;
  InputGenOptions gen;
  for (const ValueSignature& sig : model_inputs(model->proto.graph())) {
    if (!sig.has_shape) continue;
    Shape shape = sig.shape;
    int64_t elements = 1;
    for (int64_t& d : shape) {
      if (d < 0) d = 2;
      if (d > 4096) return 0;
      elements *= d;
      if (elements > 4096) return 0;
    }
    gen.shapes[sig.name] = shape;
  }
  auto inputs = generate_inputs(model->proto.graph(), gen);
  if (!inputs) return 0;
  auto interpreter = reference::Interpreter::create(model->proto, model->base_dir);
  if (!interpreter) return 0;
  (void)(*interpreter)->run(*inputs);
  return 0;
}
