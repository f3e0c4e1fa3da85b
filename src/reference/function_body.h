// Function bodies of ONNX ops (ONNX IR spec "Functions"; OpSchema::GetFunction and
// BuildContextDependentFunction of the linked ONNX 1.23): an op without a reference kernel but
// with a body in its schema runs that body. This header decides, in one place, whether the
// reference can run an op at all (op_support), and turns one node into its function body.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/onnx.h"
#include "onnxdbg/status.h"

namespace onnxdbg::reference {

/// How the reference interpreter runs an op at an opset.
enum class OpSupport {
  kNone,          ///< neither a kernel nor a function body: the model cannot run
  kKernel,        ///< a kernel of ops/ (always preferred over a body)
  kFunctionBody,  ///< the schema's function body (static or context-dependent) at that opset
};

/// Opset versions by domain ("" is the default domain; "ai.onnx" is folded into "").
using OpsetMap = std::map<std::string, int64_t>;

/// The one decision of what the reference can run: kKernel when the registry has a kernel whose
/// [since, through] holds the version in force at `opset` (KernelRegistry::find); else
/// kFunctionBody when the ONNX schema in force at `opset`, as the linked libonnx knows it, has a
/// function body, static (whose own ops must all be supported at the function's opset imports,
/// checked recursively) or context-dependent (built per node, so checked per node at load by
/// find_missing_kernels and at run time); else kNone. `domain` "ai.onnx" equals "".
OpSupport op_support(const std::string& domain, const std::string& op_type, int64_t opset);

/// Why an op at `opset` that op_support calls kNone cannot run, in one sentence naming the
/// version in force and the versions the kernels cover ("the reference has kernels for DFT-17
/// only; DFT-20 (opset 20) changed its semantics and has no kernel or function body"); empty when
/// there is nothing to add to "no kernel or function body" (an op the reference never had).
std::string unsupported_reason(const std::string& domain, const std::string& op_type,
                               int64_t opset);

/// A node's function body as a graph ready to run in a scope of its own: graph inputs are the
/// function's formal inputs that the node gives (fed with the node's input values in order),
/// graph outputs the formal outputs for the node's requested outputs (in order), nodes with every
/// `ref_attr_name` attribute bound to the node's attribute (or the schema default; dropped when
/// neither exists), references to formal inputs the node omits replaced by "" (an omitted optional
/// input), and names "<node name>/<body node>". The body's values live in their own scope, so its
/// internal names cannot clash with the caller's.
struct FunctionGraph {
  onnx::GraphProto graph;
  std::vector<int> fed_inputs;        ///< for graph input j, the node input feeding it
  std::vector<int> returned_outputs;  ///< for graph output j, the node output it becomes
  OpsetMap opsets;                    ///< the function's opset imports; its nodes run at these
};

/// Builds the body of `node` (domain/op type at `opset`) from its schema. Context-dependent
/// bodies are built with the node's attributes and `input_types` (one TypeProto per node input;
/// an unset TypeProto for an unknown or omitted one). The body's nodes run at its own opset
/// imports; a domain those leave out runs at `caller_opsets`' version (ONNX 1.23 builds
/// FlexAttention's body importing only ai.onnx.preview, though its nodes are default-domain
/// ops). Errors: kUnsupported when the schema has no body or its builder refuses these
/// attributes/types (the message names the op and opset).
Expected<FunctionGraph> build_function_graph(const onnx::NodeProto& node, int64_t opset,
                                             const std::vector<onnx::TypeProto>& input_types,
                                             const OpsetMap& caller_opsets);

}  // namespace onnxdbg::reference
