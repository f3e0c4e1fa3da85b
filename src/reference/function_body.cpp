// op_support (kernel, else the schema's function body) and building one node's function body as
// a graph. Bodies are looked up in the linked ONNX's schemas, the same ONNX the rest of
// onnxdbg links, so "the op's semantics at opset N" has one source.
#include "reference/function_body.h"

#include <exception>
#include <mutex>
#include <set>
#include <tuple>

#include "core/onnx.h"
#include "model/model.h"
#include "onnx/defs/schema.h"
#include "reference/kernel.h"
#include "reference/op_versions.h"

namespace onnxdbg::reference {
namespace {

const onnx::OpSchema* schema_at(const std::string& domain, const std::string& op_type,
                                int64_t opset) {
  if (opset <= 0) return nullptr;
  return onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset), canonical_domain(domain));
}

// The linked schema when it is the version in force at `opset`; nullptr when the linked libonnx
// only knows an older version (its body would have the older semantics).
const onnx::OpSchema* linked_schema_in_force(const std::string& domain, const std::string& op_type,
                                             int64_t opset) {
  const onnx::OpSchema* s = schema_at(domain, op_type, opset);
  if (!s) return nullptr;
  // Schemas registered after the version table was read (tests' own domains) are their only source.
  const int in_force = version_in_force(domain, op_type, opset);
  return in_force == kNoSchema || s->SinceVersion() == in_force ? s : nullptr;
}

std::string versioned(const std::string& op_type, int version) {
  return op_type + "-" + std::to_string(version);
}

OpsetMap function_opsets(const onnx::FunctionProto& fn) {
  OpsetMap m;
  for (const auto& o : fn.opset_import()) m[canonical_domain(o.domain())] = o.version();
  return m;
}

OpSupport op_support_at_depth(const std::string& domain, const std::string& op_type, int64_t opset,
                              int depth);

// True when every node of `g` (subgraphs included) can run at `opsets`. Context-dependent
// bodies met inside a static body are accepted here and checked when they are built.
bool all_supported(const onnx::GraphProto& g, const OpsetMap& opsets, int depth);

bool nodes_supported(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                     const OpsetMap& opsets, int depth) {
  for (const auto& n : nodes) {
    const std::string d = canonical_domain(n.domain());
    auto it = opsets.find(d);
    if (op_support_at_depth(d, n.op_type(), it == opsets.end() ? 0 : it->second, depth + 1) ==
        OpSupport::kNone)
      return false;
    for (const auto& a : n.attribute()) {
      if (a.has_g() && !all_supported(a.g(), opsets, depth)) return false;
      for (const auto& sg : a.graphs())
        if (!all_supported(sg, opsets, depth)) return false;
    }
  }
  return true;
}

bool all_supported(const onnx::GraphProto& g, const OpsetMap& opsets, int depth) {
  return nodes_supported(g.node(), opsets, depth);
}

OpSupport op_support_at_depth(const std::string& domain, const std::string& op_type, int64_t opset,
                              int depth) {
  if (KernelRegistry::global().find(domain, op_type, opset)) return OpSupport::kKernel;
  // ONNX bodies do not recurse; the bound only stops a malformed schema from looping.
  if (depth > 16) return OpSupport::kNone;
  static std::mutex mutex;
  static std::map<std::tuple<std::string, std::string, int64_t>, OpSupport> memo;
  const auto key = std::make_tuple(domain, op_type, opset);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  OpSupport result = OpSupport::kNone;
  if (const onnx::OpSchema* s = linked_schema_in_force(domain, op_type, opset)) {
    if (const onnx::FunctionProto* fn = s->HasFunction() ? s->GetFunction() : nullptr) {
      if (nodes_supported(fn->node(), function_opsets(*fn), depth))
        result = OpSupport::kFunctionBody;
    } else if (s->HasContextDependentFunction()) {
      result = OpSupport::kFunctionBody;
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  memo[key] = result;
  return result;
}

struct Binding {
  std::map<std::string, const onnx::AttributeProto*> attrs;  // by the caller's attribute name
  std::set<std::string> omitted;                             // formal inputs the node omits
};

// Binds ref_attr_name attributes and omitted inputs in `n` and, recursively, in its subgraphs
// (whose nodes may also refer to the function's attributes and inputs).
void bind_node(onnx::NodeProto& n, const Binding& b) {
  for (auto& in : *n.mutable_input())
    if (b.omitted.count(in)) in.clear();
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> bound;
  for (const auto& a : n.attribute()) {
    if (!a.ref_attr_name().empty()) {
      auto it = b.attrs.find(a.ref_attr_name());
      if (it == b.attrs.end()) continue;  // neither given nor defaulted: the op's own default
      onnx::AttributeProto* na = bound.Add();
      *na = *it->second;
      na->set_name(a.name());
      continue;
    }
    onnx::AttributeProto* na = bound.Add();
    *na = a;
    if (na->has_g())
      for (auto& sn : *na->mutable_g()->mutable_node()) bind_node(sn, b);
    for (auto& g : *na->mutable_graphs())
      for (auto& sn : *g.mutable_node()) bind_node(sn, b);
  }
  n.mutable_attribute()->Swap(&bound);
}

}  // namespace

OpSupport op_support(const std::string& domain, const std::string& op_type, int64_t opset) {
  return op_support_at_depth(canonical_domain(domain), op_type, opset, 0);
}

std::string unsupported_reason(const std::string& domain_in, const std::string& op_type,
                               int64_t opset) {
  const std::string domain = canonical_domain(domain_in);
  const std::string in = domain.empty() ? "" : " of domain " + domain;
  const int in_force = version_in_force(domain, op_type, opset);
  if (in_force == kNoSchema) return "";
  if (in_force == kUnknownVersion) {
    const int newest = newest_known_opset(domain);
    if (opset <= newest) return "";  // older than the op's first version
    return "opset " + std::to_string(opset) + in + " is newer than any ONNX onnxdbg knows (" +
           std::to_string(newest) + "), so which version of " + op_type +
           " is in force cannot be told";
  }
  const std::string wanted =
      versioned(op_type, in_force) + " (opset " + std::to_string(opset) + in + ")";
  const KernelRegistry& registry = KernelRegistry::global();
  std::string have;
  bool newer = true;  // the version in force is newer than every kernel, not older than one
  for (const KernelDef& k : registry.kernels(domain, op_type)) {
    newer = newer && in_force > k.since_version;
    const int through = registry.through(k);
    have += (have.empty() ? "" : ", ") + versioned(op_type, k.since_version) +
            (through > k.since_version ? " to " + versioned(op_type, through) : "");
  }
  // The version in force is a schema of the linked ONNX (version_in_force reads them): when no
  // kernel covers it, its function body is the only way left.
  if (have.empty()) return "";
  return "the reference has kernels for " + have + " only; " + wanted +
         (newer ? " changed its semantics" : " differs from them") +
         " and has no kernel or function body";
}

Expected<FunctionGraph> build_function_graph(const onnx::NodeProto& node, int64_t opset,
                                             const std::vector<onnx::TypeProto>& input_types,
                                             const OpsetMap& caller_opsets) {
  const std::string domain = canonical_domain(node.domain());
  const std::string what = node.op_type() + (domain.empty() ? "" : " (domain " + domain + ")") +
                           " at opset " + std::to_string(opset);
  const onnx::OpSchema* schema = schema_at(domain, node.op_type(), opset);
  if (!schema) return unsupported("ONNX has no schema for " + what);
  if (schema != linked_schema_in_force(domain, node.op_type(), opset))
    return unsupported(what + ": " + unsupported_reason(domain, node.op_type(), opset));
  onnx::FunctionProto fn;
  if (schema->HasFunction()) {
    fn = *schema->GetFunction();
  } else if (schema->HasContextDependentFunction()) {
    onnx::FunctionBodyBuildContextImpl build_ctx(node, input_types);
    bool built = false;
    std::string why;
    try {
      built = schema->BuildContextDependentFunction(build_ctx, fn);
    } catch (const std::exception& e) {
      why = std::string(": ") + e.what();
    }
    if (!built)
      return unsupported("the function body of " + what +
                         " cannot be built for this node's attributes and input types" + why);
  } else {
    return unsupported(what + " has no function body in its ONNX schema");
  }
  if (node.input_size() > fn.input_size() || node.output_size() > fn.output_size())
    return model_error("node '" + node.name() + "' (" + node.op_type() + ") has " +
                       std::to_string(node.input_size()) + " inputs and " +
                       std::to_string(node.output_size()) + " outputs; its function body takes " +
                       std::to_string(fn.input_size()) + " and gives " +
                       std::to_string(fn.output_size()));

  FunctionGraph out;
  out.opsets = function_opsets(fn);
  for (const auto& [domain_name, version] : caller_opsets) out.opsets.emplace(domain_name, version);
  Binding b;
  for (const auto& a : node.attribute()) b.attrs[a.name()] = &a;
  for (const auto& [name, attr] : schema->attributes())
    if (!b.attrs.count(name) && attr.default_value.type() != onnx::AttributeProto::UNDEFINED)
      b.attrs[name] = &attr.default_value;
  for (int k = 0; k < fn.input_size(); ++k) {
    if (k < node.input_size() && !node.input(k).empty()) {
      out.graph.add_input()->set_name(fn.input(k));
      out.fed_inputs.push_back(k);
    } else {
      b.omitted.insert(fn.input(k));
    }
  }
  for (int k = 0; k < node.output_size(); ++k) {
    if (node.output(k).empty()) continue;  // computed or not, nobody reads it
    out.graph.add_output()->set_name(fn.output(k));
    out.returned_outputs.push_back(k);
  }
  out.graph.set_name("function body of " + node.op_type() + " node '" + node.name() + "'");
  int i = 0;
  for (const auto& fnode : fn.node()) {
    onnx::NodeProto* n = out.graph.add_node();
    *n = fnode;
    n->set_name(node.name() + "/" +
                (fnode.name().empty() ? fnode.op_type() + "_" + std::to_string(i) : fnode.name()));
    bind_node(*n, b);
    ++i;
  }
  return out;
}

}  // namespace onnxdbg::reference
