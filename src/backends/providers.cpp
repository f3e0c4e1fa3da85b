// Execution-provider names and the requested-versus-used check behind `providers=` and
// --strict-providers (see providers.h).
#include "backends/providers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/text.h"

namespace onnxdbg {
namespace {

struct KnownProvider {
  const char* short_name;
  const char* full_name;
};

// ONNX Runtime's provider names (onnxruntime/core/graph/constants.h), with the short names users
// type. Knowing them lets a typo be an error while a real provider this build lacks is a warning.
constexpr KnownProvider kKnown[] = {
    {"cpu", "CPUExecutionProvider"},
    {"cuda", "CUDAExecutionProvider"},
    {"tensorrt", "TensorrtExecutionProvider"},
    {"nv_tensorrt_rtx", "NvTensorRTRTXExecutionProvider"},
    {"openvino", "OpenVINOExecutionProvider"},
    {"dml", "DmlExecutionProvider"},
    {"rocm", "ROCMExecutionProvider"},
    {"migraphx", "MIGraphXExecutionProvider"},
    {"coreml", "CoreMLExecutionProvider"},
    {"xnnpack", "XnnpackExecutionProvider"},
    {"qnn", "QNNExecutionProvider"},
    {"nnapi", "NnapiExecutionProvider"},
    {"webgpu", "WebGpuExecutionProvider"},
    {"webnn", "WebNNExecutionProvider"},
    {"js", "JsExecutionProvider"},
    {"cann", "CANNExecutionProvider"},
    {"acl", "ACLExecutionProvider"},
    {"armnn", "ArmNNExecutionProvider"},
    {"dnnl", "DnnlExecutionProvider"},
    {"vitisai", "VitisAIExecutionProvider"},
    {"snpe", "SNPEExecutionProvider"},
    {"azure", "AzureExecutionProvider"},
};
constexpr const char* kSuffix = "ExecutionProvider";
constexpr const char* kCpu = "CPUExecutionProvider";

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

Expected<std::string> provider_full_name(const std::string& typed) {
  if (typed.empty()) return invalid_argument("empty execution provider name");
  const std::string low = lower(typed);
  for (const auto& k : kKnown) {
    if (low == k.short_name || low == lower(k.full_name)) return std::string(k.full_name);
  }
  if (low == "trt") return std::string("TensorrtExecutionProvider");
  if (typed.size() > std::strlen(kSuffix) && typed.ends_with(kSuffix)) return typed;
  std::vector<std::string> names;
  for (const auto& k : kKnown) names.emplace_back(k.short_name);
  return invalid_argument(
      fmt::format("unknown execution provider '{}' (known: {}; or a full ONNX Runtime name such as "
                  "CUDAExecutionProvider)",
                  typed, fmt::join(names, ", ")));
}

std::string provider_short_name(const std::string& full) {
  for (const auto& k : kKnown) {
    if (full == k.full_name) return k.short_name;
  }
  std::string s = full;
  if (s.size() > std::strlen(kSuffix) && s.ends_with(kSuffix))
    s.resize(s.size() - std::strlen(kSuffix));
  return lower(s);
}

Expected<std::vector<std::string>> parse_provider_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of("+,", start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    start = end + 1;
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
      item.erase(0, 1);
    if (item.empty()) continue;
    auto full = provider_full_name(item);
    if (!full) return invalid_argument("providers=" + text + ": " + full.status().message());
    if (!contains(out, *full)) out.push_back(*full);
  }
  if (out.empty())
    return invalid_argument("providers=" + text + " names no execution provider (e.g. cuda+cpu)");
  return out;
}

ProviderReport check_providers(const std::vector<std::string>& requested,
                               const std::vector<std::string>& available,
                               const std::map<std::string, std::string>& refused,
                               const std::vector<NodePlacement>& placement) {
  ProviderReport r;
  r.requested = requested;
  for (const auto& p : placement) {
    if (r.node_counts[p.provider]++ == 0) r.used.push_back(p.provider);
  }
  const int64_t total = static_cast<int64_t>(placement.size());
  // Where the nodes went, for the sentences below: "all 3 nodes ran on CPUExecutionProvider".
  std::string where;
  if (!placement.empty()) {
    std::vector<std::string> parts;
    for (const auto& u : r.used) parts.push_back(fmt::format("{} on {}", r.node_counts[u], u));
    if (total == 1)
      where = "the only node ran on " + r.used.front();
    else if (r.used.size() == 1)
      where = fmt::format("all {} nodes ran on {}", total, r.used.front());
    else
      where = fmt::format("its {} nodes ran {}", total, fmt::join(parts, ", "));
  }
  std::vector<std::string> have;
  have.reserve(available.size());
  for (const auto& a : available) have.push_back(provider_short_name(a));

  bool missing = false;
  for (const auto& want : requested) {
    const std::string name = fmt::format("'{}' ({})", provider_short_name(want), want);
    if (want != kCpu && !contains(available, want)) {
      missing = true;
      r.warnings.push_back(fmt::format(
          "execution provider {} was requested but this ONNX Runtime build does not have it (it "
          "has: {}){}",
          name, fmt::join(have, ", "), where.empty() ? "" : "; " + where));
    } else if (auto it = refused.find(want); it != refused.end()) {
      missing = true;
      r.warnings.push_back(
          fmt::format("execution provider {} was requested but ONNX Runtime could "
                      "not add it: {}{}",
                      name, it->second, where.empty() ? "" : "; " + where));
    }
  }
  if (missing || placement.empty()) return r;
  // Every requested provider is there. The first one should have taken nodes: if it took none,
  // ONNX Runtime silently gave the whole graph to a lower-priority provider.
  const std::string& first = requested.front();
  if (requested.size() > 1 && r.node_counts[first] == 0) {
    r.warnings.push_back(fmt::format(
        "execution provider '{}' ({}) was requested first but ONNX Runtime assigned it none of "
        "the {}; {}",
        provider_short_name(first), first, plural(total, "node", "nodes"), where));
  }
  for (const auto& u : r.used) {
    if (contains(requested, u)) continue;
    std::vector<std::string> asked;
    asked.reserve(requested.size());
    for (const auto& q : requested) asked.push_back(provider_short_name(q));
    r.warnings.push_back(
        fmt::format("{} of the {} ran on {}, which was not requested (requested: "
                    "{})",
                    r.node_counts[u], plural(total, "node", "nodes"), u, fmt::join(asked, "+")));
  }
  // node_counts holds zero entries for the providers looked up above; keep only real counts.
  std::erase_if(r.node_counts, [](const auto& kv) { return kv.second == 0; });
  return r;
}

}  // namespace onnxdbg
