// Model surgery (Polygraphy's `surgeon`): fix input shapes, fold constants, remove dead nodes,
// reorder nodes, extract subgraphs, convert opsets and precision. Every edit works on an
// onnx::ModelProto in memory; finish_edit() checks the result (ONNX checker + lint) and
// save_model_with_external_data() (model/external_data.h) writes it, resolving external data
// against the source model's folder.
// One file per edit: sanitize.cpp, fold_constants.cpp, cleanup.cpp, toposort.cpp, extract.cpp,
// convert_opset.cpp, to_fp16.cpp; shared helpers in surgeon.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "onnxdbg/status.h"
#include "onnxdbg/surgeon_options.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg::surgeon {

// --- input shapes --------------------------------------------------------------------------------

/// Sets the dims of the named graph inputs (ONNX IR "Static tensor shapes": every dim becomes a
/// dim_value) and refreshes value_info and graph output types by re-running shape inference.
/// Errors: kInvalidArgument naming an entry that is not a graph input (initializers excluded),
/// a rank that contradicts a declared rank, or a dim that contradicts a static dim.
Status override_input_shapes(onnx::ModelProto& model, const std::map<std::string, Shape>& shapes);

// --- constant folding
// ------------------------------------------------------------------------------

/// Folds every node computable from constants: initializers (from IR 4 on, not those that are
/// also main-graph inputs, which a caller may override), Constant nodes, and Shape/Size of tensors
/// whose shape shape inference knows statically. Nodes run on the reference interpreter (external
/// data read relative to `base_dir`) and their outputs that the rest of the graph still reads
/// become initializers of the same name; folding and shape inference repeat until nothing
/// changes. A node with subgraphs (If, Loop, Scan) folds as a whole when everything it reads is
/// constant; otherwise its bodies are folded inside (ONNX IR "Scoping": a body sees the constants
/// of every enclosing graph unless its own inputs shadow them), the folded values becoming
/// initializers of the body, and a folded body output an Identity of such an initializer. Shape
/// and Size fold in If branches but not in Loop/Scan bodies (carried values may change shape), and
/// bodies are left alone below IR 4 (which lists every initializer among a graph's inputs).
/// Skipped: non-deterministic ops (Random*, Bernoulli, Multinomial), ops without a reference
/// kernel, nodes whose evaluation fails (a note says why), outputs over `size_limit`.
/// Errors: kModelError when an initializer cannot be read.
Expected<FoldStats> fold_constants(onnx::ModelProto& model, const std::filesystem::path& base_dir,
                                   const FoldOptions& options = {});

// --- cleanup and order
// -------------------------------------------------------------------------------

/// Removes dead nodes and unused initializers from the main graph and every subgraph (a subgraph's
/// outputs are its roots), and value_info entries of values that no longer exist. Graph inputs
/// stay (they are the model's interface) unless they only declared an unused initializer.
CleanupStats cleanup(onnx::ModelProto& model);

/// The model with main-graph node `node_index`, an If, replaced by the nodes of its then_branch
/// (or else_branch) at its place, as if its condition were constant: each branch output a branch
/// node produces takes the name of the If's output (else an Identity makes it), the branch's
/// initializers join the main graph's, and a value the branch defines under a name the main
/// graph (or one of its bodies) already uses is renamed "<name>_<branch>_<k>", in nested bodies
/// too (ONNX IR "Scoping"). Inlined nodes are named by their path, "<If name>/<branch>/<node
/// name>" (an unnamed If "If#<index>", an unnamed node "<op type>#<index in the branch>"). The If's
/// condition is left to whatever else reads it (a cleanup or reduce removes it when nothing
/// does). Errors: kInvalidArgument when the node is missing or not an If; kModelError when the
/// branch is missing or its output count differs from the node's.
Expected<onnx::ModelProto> inline_if_branch(const onnx::ModelProto& model, int node_index,
                                            bool then_branch);

/// Reorders the nodes of the main graph and of every subgraph so each node comes after the
/// producers of everything it reads (inputs and values its subgraphs read from this graph),
/// keeping the original order wherever it is already valid (stable Kahn). Returns how many nodes
/// changed position (model/graph.h's topological_order, graph by graph). Errors: kModelError
/// naming the nodes of one cycle ("#0 Add 'a' -> #1 Mul 'b' -> #0 Add 'a'") or a node reading a
/// name nothing defines, with the graph's path as context; the model unchanged.
Expected<int64_t> toposort(onnx::ModelProto& model);

// --- sanitize (the command)
// -------------------------------------------------------------------------

/// Runs the requested steps in the order toposort, input shapes, fold, cleanup (toposort first so
/// folding sees a valid order). Errors: those of each step.
Expected<SanitizeReport> sanitize(onnx::ModelProto& model, const std::filesystem::path& base_dir,
                                  const SanitizeOptions& options);

// --- extract
// -----------------------------------------------------------------------------------------

/// Replaces the main graph with the nodes that compute `outputs` from `inputs` plus initializers
/// (and Constant nodes), in their original order. Inputs and outputs get the given type, or the
/// one shape inference gives the source model. Errors: kNotFound for a tensor the model lacks;
/// kInvalidArgument "output 'y' would still need 'z' ..." when an output depends on a value
/// that is neither a given input nor computable from initializers; kInvalidArgument when "auto"
/// cannot be resolved for a dtype.
Status extract(onnx::ModelProto& model, const std::vector<ExtractTensor>& inputs,
               const std::vector<ExtractTensor>& outputs);

// --- opset and precision
// ---------------------------------------------------------------------------

/// Converts the default-domain opset to `target` with ONNX's version converter (the linked ONNX
/// 1.23: opsets 1..28). Large and external initializers bypass the converter (it would copy or
/// drop them) and are restored afterwards. Errors: kUnsupported with one sentence naming the op
/// the converter cannot convert; kInvalidArgument for a target outside what the linked ONNX knows.
Status convert_opset(onnx::ModelProto& model, int64_t target);

/// Declares default-domain opset `target` without converting a node (lint::set_opset): for a
/// model whose nodes already have that opset's forms. Errors: kInvalidArgument for a target
/// outside what the linked ONNX knows.
Status set_opset(onnx::ModelProto& model, int64_t target);

/// Converts float32 initializers, activations, Constant/ConstantOfShape values and Cast/dtype
/// attributes to float16 (values beyond float16's range clamp to +-65504), in the main graph and
/// inside If branches and Loop/Scan bodies: a body's float32 inputs, outputs and loop-carried
/// values become float16 with the node's (a Cast at a body output that is not). Blocked ops
/// (a blocked If keeps its branches float32), ops without a schema, other ops with subgraphs, and
/// inputs whose schema allows no float16 (Resize scales) keep float32 with Cast nodes at their
/// edges; value_info is re-inferred (the bodies' is dropped).
/// Errors: kModelError when an initializer cannot be read (external data via `base_dir`).
Expected<Fp16Stats> to_fp16(onnx::ModelProto& model, const std::filesystem::path& base_dir,
                            const Fp16Options& options);

// --- checking and writing ------------------------------------------------------------------------

/// Checks an edited model with lint (the ONNX checker is one of its rules); external data resolves
/// against `base_dir`. Errors: those of lint_model (the model cannot be checked at all).
Expected<EditCheck> check_edit(const onnx::ModelProto& model,
                               const std::filesystem::path& base_dir);

/// check_edit as a Status: kModelError "<summary>, so it was not written" when there are lint
/// errors, so a broken result is never written.
Status finish_edit(const onnx::ModelProto& model, const std::filesystem::path& base_dir);

/// Number of nodes in the main graph and all subgraphs.
int64_t count_nodes(const onnx::GraphProto& g);

}  // namespace onnxdbg::surgeon
