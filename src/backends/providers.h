// Execution-provider truth for ONNX Runtime: the provider names users type ("cuda", "cpu",
// "TensorrtExecutionProvider"), and the check that compares the providers asked for with those
// the session really has and the nodes ONNX Runtime assigned to each. Pure functions of names, so
// they live in the library (the worker and onnxdbg share them) and are tested without ORT.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onnxdbg/session_info.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

/// The full ONNX Runtime name of a provider the user typed: a short name, case-insensitive
/// ("cpu" -> "CPUExecutionProvider", "cuda", "tensorrt" or "trt", "openvino", "dml", "rocm",
/// "migraphx", "coreml", "xnnpack", "qnn", "nnapi", "webgpu", "cann", "acl", "armnn", "dnnl",
/// "vitisai", "snpe", "azure", "webnn", "js", "nv_tensorrt_rtx"), or a full name ending in
/// "ExecutionProvider" (kept verbatim when unknown, matched case-insensitively when known).
/// Errors: kInvalidArgument for an empty name or an unknown short name (the message lists the
/// known short names).
Expected<std::string> provider_full_name(const std::string& typed);

/// "CPUExecutionProvider" -> "cpu": the short name for messages; a full name not in the table
/// loses its "ExecutionProvider" suffix and is lower-cased.
std::string provider_short_name(const std::string& full);

/// Parses the value of onnxruntime's `providers=` option: names separated by '+' or ',' in
/// priority order ("cuda+cpu", "cuda,cpu"), each as provider_full_name; duplicates are dropped.
/// Errors: kInvalidArgument for an empty list or an unknown name (naming it).
Expected<std::vector<std::string>> parse_provider_list(const std::string& text);

/// What onnxdbg learned about providers after creating a session.
struct ProviderReport {
  std::vector<std::string> requested;  ///< full names, priority order
  std::vector<std::string> used;       ///< providers that got at least one node, first-seen order
  std::map<std::string, int64_t> node_counts;  ///< provider -> nodes assigned to it
  /// One sentence per problem: a requested provider that this ONNX Runtime lacks or refused, a
  /// requested provider that got no node, nodes placed on a provider that was not requested.
  /// Empty when the session runs exactly on providers that were asked for.
  std::vector<std::string> warnings;
};

/// Compares the providers asked for with what the session has.
///   requested: full names in priority order (parse_provider_list);
///   available: Ort::GetAvailableProviders() of this ONNX Runtime build;
///   refused:   provider -> ORT's error text, for available providers whose Append call failed;
///   placement: every node and its provider (Session_GetEpGraphAssignmentInfo). When empty (ORT
///              could not tell, or a graph without nodes) no node-based warning is given.
/// Never fails: every mismatch becomes a warning sentence naming the provider, what happened to
/// it and where its nodes went ("... ran all 3 nodes on CPUExecutionProvider").
ProviderReport check_providers(const std::vector<std::string>& requested,
                               const std::vector<std::string>& available,
                               const std::map<std::string, std::string>& refused,
                               const std::vector<NodePlacement>& placement);

}  // namespace onnxdbg
