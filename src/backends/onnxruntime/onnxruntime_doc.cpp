// The `onnxruntime` backend's name, help and options (ONNX Runtime), for --backends' help and the
// checks of validate_backend_spec. Linked into onnxdbg itself, whether or not the backend runs in
// the worker.
#include "backends/backend.h"

namespace onnxdbg {

BackendDoc onnxruntime_backend_doc() {
  BackendDoc doc{
      "onnxruntime",
      "ONNX Runtime (CPU), in an isolated worker process",
      true,
      {{"opt", "disabled|basic|extended|all", "graph optimization level (default all)"},
       {"threads", "N", "intra-op threads (default: ONNX Runtime's choice)"},
       {"providers", "cpu|cuda|tensorrt|openvino|...[+...]",
        "execution providers to request, in priority order, separated by '+' or ',' "
        "(providers=cuda+cpu); one this ONNX Runtime lacks, or nodes placed on one not "
        "requested, is a warning (an error with --strict-providers)"},
       {"optimized_model", "PATH", "save the optimized graph to PATH"},
       {"disable", "NAME[+NAME...]",
        "graph transformers or rewrite rules not to apply, by the names of ONNX Runtime's log "
        "(disable=ConvActivationFusion+Pad_Fusion; Level1_RuleBasedTransformer disables all of "
        "level 1's rules); a name ONNX Runtime 1.29 does not have is a warning"},
       {"config.KEY", "VALUE",
        "a session config entry (config.session.disable_quant_qdq=1, "
        "config.optimization.enable_gelu_approximation=1)"},
       {"list_transformers", "on|off",
        "record which graph transformers changed the model (ONNX Runtime's INFO log, in "
        "--json as transformers_applied; default off)"},
       {"arena", "on|off",
        "ONNX Runtime's CPU memory arena (default on); off allocates each tensor apart, so "
        "memory one session frees is reused by the next (layerwise runs use it)"},
       {"timeout", "SECONDS", "kill the worker after this long (default 300)"}},
      {}};
  doc.traits.float32_compute_reason =
      " (ONNX Runtime's CPU provider has float16 kernels for few ops; it casts around the "
      "others and drops the float16 round trips between them)";
  return doc;
}

}  // namespace onnxdbg
