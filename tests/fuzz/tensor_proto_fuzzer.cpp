// Fuzz target: a serialized TensorProto (the .pb files of ONNX test data, `--load-inputs x.pb`, and
// every initializer) through tensor_from_proto, typed fields, raw_data and external data.
#include <cstddef>
#include <cstdint>

#include "fuzz_limits.h"
#include "model/model.h"

using namespace onnxdbg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ScopedRunLimits limits(fuzz_limits());
  onnx::TensorProto proto;
  if (size > static_cast<size_t>(INT32_MAX) || !proto.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  (void)tensor_from_proto(proto, "/nonexistent/onnxdbg-fuzz");
  return 0;
}
