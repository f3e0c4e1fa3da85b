// Rule attributes: every node's attributes against its op's schema at the model's opset (ONNX IR
// "Attributes", operator schemas): required ones present, no unknown or repeated names, each of
// the declared type. Reports every problem of every node, where the ONNX checker stops at one.
#include <unordered_set>

#include "lint/rule.h"

namespace onnxdbg::lint {

namespace {

using Attr = onnx::AttributeProto;

Attr::AttributeType actual_type(const Attr& a) {
  if (a.type() != Attr::UNDEFINED) return a.type();
  // Early IR versions left `type` unset: infer it from the value field that is filled.
  if (a.has_f()) return Attr::FLOAT;
  if (a.has_i()) return Attr::INT;
  if (a.has_s()) return Attr::STRING;
  if (a.has_t()) return Attr::TENSOR;
  if (a.has_g()) return Attr::GRAPH;
  if (a.has_sparse_tensor()) return Attr::SPARSE_TENSOR;
  if (a.has_tp()) return Attr::TYPE_PROTO;
  if (a.floats_size()) return Attr::FLOATS;
  if (a.ints_size()) return Attr::INTS;
  if (a.strings_size()) return Attr::STRINGS;
  if (a.tensors_size()) return Attr::TENSORS;
  if (a.graphs_size()) return Attr::GRAPHS;
  if (a.sparse_tensors_size()) return Attr::SPARSE_TENSORS;
  if (a.type_protos_size()) return Attr::TYPE_PROTOS;
  return Attr::UNDEFINED;
}

std::string type_name(Attr::AttributeType t) {
  std::string s = onnx::AttributeProto_AttributeType_Name(t);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// True when the schema accepts this node as a whole. Used to honour schemas that allow unchecked
// attributes (OpSchema::AllowUncheckedAttributes has no accessor).
bool schema_accepts(const onnx::OpSchema& schema, const onnx::NodeProto& node) {
  try {
    schema.Verify(node);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

void lint_attributes(RuleContext& ctx, const GraphInfo& g) {
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    if (ctx.is_local_function(n)) continue;
    const SchemaLookup l = ctx.lookup(n);
    if (!l.schema || l.schema->Deprecated()) continue;  // unknown_op / op_not_in_opset say why
    const Severity sev = l.beyond_known ? Severity::kWarning : Severity::kError;
    const std::string where =
        n.op_type() + " (opset " + std::to_string(l.checked_opset) +
        (l.beyond_known ? ", the newest this ONNX knows; cannot verify" : "") + ")";
    const auto& attrs = l.schema->attributes();
    std::unordered_set<std::string> present;
    std::vector<std::string> unknown;
    for (const auto& a : n.attribute()) {
      if (!present.insert(a.name()).second) {
        ctx.report(sev, g, i, "attribute '" + a.name() + "' is given more than once.");
        continue;
      }
      if (!a.ref_attr_name().empty()) continue;  // bound by a calling function, checked there
      auto it = attrs.find(a.name());
      if (it == attrs.end()) {
        unknown.push_back(a.name());
        continue;
      }
      const auto t = actual_type(a);
      if (t != it->second.type)
        ctx.report(sev, g, i,
                   "attribute '" + a.name() + "' is of type " + type_name(t) + " but " + where +
                       " expects " + type_name(it->second.type) + ".");
    }
    if (!unknown.empty() && !schema_accepts(*l.schema, n)) {
      std::vector<std::string> names;
      names.reserve(attrs.size());
      for (const auto& [name, attr] : attrs) names.push_back(name);
      for (const auto& u : unknown) {
        std::string msg = "attribute '" + u + "' is not an attribute of " + where;
        if (auto hint = closest_name(u, names))
          msg += "; did you mean '" + *hint + "'?";
        else
          msg += ".";
        ctx.report(sev, g, i, msg);
      }
    }
    for (const auto& [name, attr] : attrs)
      if (attr.required && !present.count(name))
        ctx.report(sev, g, i,
                   "required attribute '" + name + "' (" + type_name(attr.type) + ") of " + where +
                       " is missing.");
  }
}

}  // namespace onnxdbg::lint
