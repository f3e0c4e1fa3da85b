// The model edits behind the commands lint suggests as fixes (`surgeon sanitize --toposort`,
// `surgeon convert-opset`, `surgeon set-opset`). They live below surgeon so lint can make the edit
// on a copy and lint the result before it names a command; surgeon's commands call these same
// functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/onnx.h"
#include "onnxdbg/status.h"

namespace onnxdbg::lint {

/// Reorders the nodes of the main graph and of every subgraph so each node comes after the
/// producers of everything it reads (inputs and values its subgraphs read from this graph),
/// keeping the original order wherever it is already valid (stable Kahn). Returns how many nodes
/// changed position (model/graph.h's topological_order, graph by graph). Errors: kModelError
/// naming the nodes of one cycle ("#0 Add 'a' -> #1 Mul 'b' -> #0 Add 'a'") or a node reading a
/// name nothing defines, with the graph's path as context; the model unchanged.
Expected<int64_t> sort_nodes(onnx::ModelProto& model);

/// Converts the default-domain opset to `target` with ONNX's version converter (the linked ONNX
/// 1.23: opsets 1..28). Large and external initializers bypass the converter (it would copy or
/// drop them) and are restored afterwards. Errors: kUnsupported with one sentence naming the op
/// the converter cannot convert; kInvalidArgument for a target outside what the linked ONNX knows
/// or a model without a default-domain opset.
Status convert_opset(onnx::ModelProto& model, int64_t target);

/// Declares default-domain opset `target` in opset_import (adding the import when there is none)
/// and changes nothing else: for a model whose nodes already have that opset's forms, which the
/// version converter cannot convert since the declared opset lacks them (ONNX "Operator
/// Versioning": a model's ops are those of the opsets it imports). What the nodes then mean is
/// what `target` says; lint checks the result. Errors: kInvalidArgument for a target outside what
/// the linked ONNX knows (1..28).
Status set_opset(onnx::ModelProto& model, int64_t target);

/// A copy-pasteable surgeon command on the model at `model`: "onnxdbg surgeon sanitize m.onnx
/// --toposort -o m.sorted.onnx" for ("sanitize", "--toposort", "sorted"); the output sits next to
/// the model as "<stem>.<out_suffix>.onnx"; paths are shell-quoted where they need it, and a
/// relative path starting with '-' gets "./". An empty `model` is written "model.onnx".
std::string surgeon_command_line(const std::filesystem::path& model, const std::string& command,
                                 const std::string& flags, const std::string& out_suffix);

}  // namespace onnxdbg::lint
