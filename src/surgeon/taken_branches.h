// The control flow of a model as it ran on given inputs: each If replaced by the branch it took
// and each Loop unrolled into the iterations it ran, so that every value computed inside them is
// a value of the main graph, which backends can be asked for as graph outputs (the layerwise pass
// inside If branches and Loop bodies, issue 18), and which reduce can take apart.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "onnxdbg/layerwise_report.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "reference/interpreter.h"

namespace onnxdbg::surgeon {

/// What the control-flow nodes of a main graph did on some inputs (observe_control_flow).
struct ControlFlowRun {
  std::map<int, bool> conditions;     ///< If node index -> its condition
  std::map<int, int64_t> iterations;  ///< Loop or Scan node index -> iterations its body ran
  /// Scan node index -> the shapes of its scan inputs (Scan-9 and later)
  std::map<int, std::vector<Shape>> scan_input_shapes;
};

/// Runs the reference on `inputs` (external data resolved against `base_dir`) as far as the last
/// If or Loop of the main graph and reads what each did: an If's condition (ONNX If-1..21: a
/// single-element tensor, true when not zero), a Loop's iteration count (Loop-1..21: counted
/// by a scan output of the iteration number added to a copy of the body) and a Scan's scan input
/// shapes (Scan-9..25; its iterations: the length of scan input 0's scanned axis). No run when
/// every value needed is a graph input or an initializer. Errors: the reference's
/// (kUnsupported for an op it cannot run, kInvalidArgument for inputs that do not fit,
/// kModelError), kModelError for a condition that is not a single element or an If without one,
/// each naming the node.
Expected<ControlFlowRun> observe_control_flow(const onnx::ModelProto& model,
                                              const std::filesystem::path& base_dir,
                                              const std::map<std::string, Tensor>& inputs,
                                              const reference::InterpreterOptions& options = {});

/// The model with main-graph node `node_index`, a Loop, replaced by `iterations` (at least 1)
/// copies of its body, one per iteration, as the Loop ran them (ONNX Loop-1..21): iteration k's
/// iteration number is a Constant k, its condition and loop-carried inputs are the previous
/// iteration's outputs (the Loop's inputs for the first; an omitted condition a Constant true);
/// the Loop's final loop-carried outputs are Identities of the last iteration's, and each scan
/// output is the iterations' values Unsqueezed on a new axis 0 and Concatenated. Values the body
/// defines become "<name>__iter<k>" (made unique against the main graph's names), its nodes are
/// named "<Loop name>/body/<node name> [iter k]" (unnamed ones "Loop#<index>", "<op>#<index>"),
/// and its initializers are lifted into the main graph once. The result computes what the Loop
/// computes when it runs exactly `iterations` times (the trip count and the conditions are no
/// longer read). Errors: kInvalidArgument when the node is missing or not a Loop, or iterations
/// < 1; kModelError when the body's inputs or outputs do not match the node's.
Expected<onnx::ModelProto> unroll_loop(const onnx::ModelProto& model, int node_index,
                                       int64_t iterations);

/// The model with main-graph node `node_index`, a Scan (Scan-9..25), replaced by one copy of its
/// body per slice of its scan inputs, whose shapes are `scan_input_shapes` (observe_control_flow):
/// iteration k reads slice k of each scan input (len-1-k for scan_input_directions 1), taken by a
/// Gather on its scan_input_axes, and the state the previous iteration left (the Scan's state
/// inputs for the first); the final states are Identities of the last iteration's, and each scan
/// output is the iterations' values Unsqueezed and Concatenated on its scan_output_axes (in
/// reverse for scan_output_directions 1). Names as unroll_loop's. Errors: kInvalidArgument when
/// the node is missing or not a Scan or scans no slice; kUnsupported for Scan-8 and for a
/// negative scan_output_axes before opset 11; kModelError when the body, the attributes or the
/// shapes do not match the node.
Expected<onnx::ModelProto> unroll_scan(const onnx::ModelProto& model, int node_index,
                                       const std::vector<Shape>& scan_input_shapes);

struct TakenBranches {
  onnx::ModelProto model;          ///< the model with the control flow replaced
  std::vector<TakenBranch> taken;  ///< in the order they were replaced (outer nodes first)
  /// Control-flow nodes left in place, each with why: "Loop 'l' ran no iteration", "Loop 'l'
  /// ran 500 iterations of 12 nodes (more than 2000 nodes unrolled)", "Scan 's': Scan-8 ... is
  /// not unrolled", "#3 If is nested deeper than 16 levels".
  std::vector<std::string> kept;
};

/// Levels of nested control flow inline_taken_branches replaces at most (one reference run each).
inline constexpr int kMaxInlinedIfDepth = 16;
/// A Loop or Scan is unrolled only while the nodes it unrolls into (unrolled_nodes) stay within
/// this.
inline constexpr int64_t kMaxUnrolledNodes = 2000;

/// How many nodes Loop or Scan `node` unrolls into over `iterations` (unroll_loop, unroll_scan):
/// per iteration its body's nodes and the ones feeding them (an iteration number, a slice per
/// scan input), at least one, so that an empty body run a billion times still counts.
int64_t unrolled_nodes(const onnx::NodeProto& node, int64_t iterations);

/// The model with every If of its main graph replaced by the branch it takes on `inputs`
/// (inline_if_branch) and every Loop and Scan unrolled into the iterations it runs (unroll_loop,
/// unroll_scan), those of the inlined bodies too, level by level: each level is one
/// observe_control_flow (on
/// `options`, external data resolved against `base_dir`). The result computes the same values as
/// the model on these inputs (and only on inputs that take the same branches and iteration
/// counts); the nodes' outputs keep their names, as do the branches' values unless the main graph
/// already uses the name. Loops and Scans that ran no iteration or would unroll into more than
/// kMaxUnrolledNodes nodes, and Scan-8, stay (TakenBranches::kept), with what their bodies hold.
/// A model without an If, Loop or Scan comes back as it is, with no reference run. Errors: as
/// observe_control_flow, and as inline_if_branch and unroll_loop.
Expected<TakenBranches> inline_taken_branches(const onnx::ModelProto& model,
                                              const std::filesystem::path& base_dir,
                                              const std::map<std::string, Tensor>& inputs,
                                              const reference::InterpreterOptions& options = {});

}  // namespace onnxdbg::surgeon
