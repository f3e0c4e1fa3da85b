// The version of an op in force at an opset, from the linked ONNX's schemas (1.23: every version
// up to opset 28).
#include "reference/op_versions.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/onnx.h"
#include "model/model.h"
#include "onnx/defs/schema.h"

namespace onnxdbg::reference {
namespace {

struct Versions {
  std::map<std::pair<std::string, std::string>, std::vector<int>> by_op;
  std::map<std::string, int> newest_opset;  // by domain
};

const Versions& versions() {
  static const Versions v = [] {
    Versions out;
    for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history())
      out.by_op[{canonical_domain(s.domain()), s.Name()}].push_back(s.SinceVersion());
    for (const auto& [domain, range] :
         onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map())
      out.newest_opset[canonical_domain(domain)] = range.second;
    for (auto& [key, list] : out.by_op) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    return out;
  }();
  return v;
}

}  // namespace

int validated_opset(const std::string& domain) {
  const std::string d = canonical_domain(domain);
  if (d.empty()) return 17;
  if (d == "ai.onnx.ml") return 3;
  if (d == "ai.onnx.preview.training") return 1;
  return 0;
}

int newest_known_opset(const std::string& domain) {
  const auto& m = versions().newest_opset;
  auto it = m.find(canonical_domain(domain));
  return it == m.end() ? 0 : it->second;
}

const std::vector<int>& schema_versions(const std::string& domain, const std::string& op_type) {
  static const std::vector<int> kNone;
  const auto& m = versions().by_op;
  auto it = m.find({canonical_domain(domain), op_type});
  return it == m.end() ? kNone : it->second;
}

int version_in_force(const std::string& domain, const std::string& op_type, int64_t opset) {
  const std::vector<int>& list = schema_versions(domain, op_type);
  if (list.empty()) return kNoSchema;
  if (opset > newest_known_opset(domain)) return kUnknownVersion;
  int in_force = kUnknownVersion;
  for (int since : list)
    if (since <= opset) in_force = since;
  return in_force;
}

}  // namespace onnxdbg::reference
