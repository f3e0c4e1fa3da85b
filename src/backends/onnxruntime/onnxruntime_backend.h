// The ONNX Runtime backend, in-process. Only onnxdbg-worker links ONNX Runtime and calls this;
// onnxdbg itself reaches it through make_isolated_backend (isolated.h).
#pragma once

#include <memory>

#include "backends/backend.h"

namespace onnxdbg {

/// Creates the ONNX Runtime backend. Options:
///   opt=disabled|basic|extended|all  graph optimization level (default all)
///   threads=N                        intra-op threads; 0 (default) lets ONNX Runtime choose
///   providers=P1+P2                  execution providers in priority order (default cpu),
///                                    separated by '+' or ','; short ("cuda") or full
///                                    ("CUDAExecutionProvider") names (parse_provider_list).
///                                    A provider this build lacks, or that ORT refuses to add, is
///                                    skipped with a warning (SessionInfo::provider_warnings);
///                                    ORT's CPU provider takes the nodes no other provider takes
///   optimized_model=PATH             write the optimized graph there when the session loads
/// Unknown options are ignored with a warning in SessionInfo::warnings.
/// Tensors: float, double, float16, bfloat16, int8..int64, uint8..uint64, bool and string.
/// After load, SessionInfo holds the providers requested and used, each node's provider (ORT's
/// Session_GetEpGraphAssignmentInfo, recorded after basic graph optimizations) and the
/// check_providers warnings.
/// Errors: kInvalidArgument for a bad option value or an unknown provider name. load() gives
/// kBackendError with ONNX Runtime's own message.
Expected<std::unique_ptr<Backend>> make_onnxruntime_backend(const BackendSpec& spec);

}  // namespace onnxdbg
