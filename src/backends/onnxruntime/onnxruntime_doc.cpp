// The `onnxruntime` backend's name, help and options (ONNX Runtime), for --backends' help and the
// checks of validate_backend_spec. Linked into onnxdbg itself, whether or not the backend runs in
// the worker.
#include "backends/backend.h"

namespace onnxdbg {

BackendDoc onnxruntime_backend_doc() {
  return {"onnxruntime",
          "ONNX Runtime (CPU), in an isolated worker process",
          true,
          {{"opt", "disabled|basic|extended|all", "graph optimization level (default all)"},
           {"threads", "N", "intra-op threads (default: ONNX Runtime's choice)"},
           {"providers", "cpu|cuda|tensorrt|openvino|...[+...]",
            "execution providers to request, in priority order, separated by '+' or ',' "
            "(providers=cuda+cpu); one this ONNX Runtime lacks, or nodes placed on one not "
            "requested, is a warning (an error with --strict-providers)"},
           {"optimized_model", "PATH", "save the optimized graph to PATH"},
           {"arena", "on|off",
            "ONNX Runtime's CPU memory arena (default on); off allocates each tensor apart, so "
            "memory one session frees is reused by the next (layerwise runs use it)"},
           {"timeout", "SECONDS", "kill the worker after this long (default 300)"}}};
}

}  // namespace onnxdbg
