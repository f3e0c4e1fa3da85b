// The reference interpreter: runs an ONNX graph node by node with onnxdbg's own kernels. It is the
// golden backend every other backend is compared against, so it favours clarity and exactness.
// Follows the ONNX IR spec ("Graphs", "Names Within a Graph", nested-scope rules for subgraphs).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/onnx.h"
#include "onnxdbg/enum_names.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "onnxdbg/value.h"
#include "reference/function_body.h"
#include "reference/kernel.h"
#include "reference/parallel.h"

namespace onnxdbg::reference {

/// Called once per output tensor of every top-level node, right after the node runs, so in the
/// order the nodes run (see Interpreter::run); `node_index` is the node's index in the main
/// graph's node list (outputs that are sequences or optionals are not reported; nodes run through a
/// function body report their own outputs, not the body's). `value` is only valid during the call
/// (the interpreter frees tensors after their last use); copy what you keep.
using NodeHook = std::function<void(const onnx::NodeProto& node, size_t node_index,
                                    const std::string& tensor_name, const Tensor& value)>;

/// One op the reference cannot run (no kernel, no runnable function body): "Foo" of domain "" at
/// opset 13.
struct MissingKernel {
  std::string domain;
  std::string op_type;
  int64_t opset = 0;
  /// Why, where there is more to say than "no kernel or function body" (unsupported_reason):
  /// the versions the kernels cover and the version in force at `opset`.
  std::string reason;
  std::string to_string() const;
};

/// Every (domain, op type) in `model`, subgraphs included, that op_support says cannot run at the
/// model's opset; for ops run through a function body, the ops of the body built for that node
/// (with the types the model declares for its inputs) at the function's opsets. A body that
/// cannot be built before run time (its builder needs input types the model does not declare) is
/// trusted here and checked when the node runs.
std::vector<MissingKernel> find_missing_kernels(const onnx::ModelProto& model);

/// Precision of the sums inside accumulating ops (KernelDef::accumulates: reductions, Softmax,
/// normalisation statistics, MatMul, Gemm, Conv, ConvTranspose, pooling averages, RNNs, ...).
enum class Accumulate {
  kFloat,  ///< as the input type: float32 kernels (BLAS sgemm) for float32, float16, bfloat16
  kDouble  ///< float64: such ops run on float64 copies of their float32/float16/bfloat16 inputs
           ///< (BLAS dgemm) and each float64 output is rounded once to the input type
};

inline constexpr EnumNames<Accumulate, 2> kAccumulateNames{
    {{Accumulate::kFloat, "float"}, {Accumulate::kDouble, "double"}}};
/// "float" or "double"; parse_accumulate is its inverse (kInvalidArgument for other names).
const char* accumulate_name(Accumulate a);
Expected<Accumulate> parse_accumulate(const std::string& name);

/// How an Interpreter runs.
struct InterpreterOptions {
  /// A stricter golden run with Accumulate::kDouble (`reference:accumulate=double`, `onnxdbg run
  /// --reference-accumulate double`). Ops that do not accumulate (elementwise, data movement)
  /// run as with kFloat. Both modes give the same bits run to run.
  Accumulate accumulate = Accumulate::kFloat;
  /// Time every top-level node and total the times per op type (see Interpreter::profile()).
  /// The environment variable ONNXDBG_PROFILE=1 turns it on as well.
  bool profile = false;
  /// Seed of the random ops that have no `seed` attribute (RandomNormal, RandomUniform, their
  /// *Like forms, Bernoulli, Multinomial). Each run starts afresh from it, so two runs of one
  /// model with one seed give the same values bit for bit; a node's values depend on this seed,
  /// its name (its index in its graph when unnamed) and how often it ran before in the run
  /// (reference::RandomSource). Ops with a `seed` attribute use that instead.
  uint64_t random_seed = 0;
  /// Threads the kernels split their work over (`reference:threads=N`), the calling thread
  /// included; values below 1 count as 1. Kernels cut their work into chunks fixed by the shapes
  /// alone (reference/parallel.h), so outputs are the same bit for bit for every thread count.
  int threads = 1;
  /// Seconds one run (run, run_values, run_prefix) may take (`reference:timeout=SECONDS`,
  /// `onnxdbg run --timeout`); 0: no limit. Checked between nodes, before every subgraph run
  /// (each Loop/Scan iteration, If branch) and inside long kernels (pooling and convolution
  /// windows, once per row of output positions); a run past it fails with kBackendError
  /// "timed out after N s" naming the node. A cancel flag installed by the caller
  /// (ScopedRunLimits, core/run_limits.h; api::run installs its CancelToken's) stops it too.
  double timeout_seconds = 0;
  /// Bytes one tensor may take (`reference:max_memory=SIZE`, `--max-memory`): initializers are
  /// checked by create(), tensors the kernels make before they are allocated (Tensor::make);
  /// 0: core's default_memory_limit() (80% of the memory available). A larger one fails with
  /// kInvalidArgument naming the tensor, its type and its size.
  uint64_t max_memory = 0;
  /// Iterations one Loop or Scan node may run (`reference:max_iterations=N`,
  /// `--max-iterations`); 0: no bound. A Loop reaching it fails with kBackendError naming the
  /// node (reference/run_watch.h: note_iteration).
  uint64_t max_iterations = 0;
};

/// Time spent in one op type during profiled runs.
struct OpProfile {
  std::string domain;
  std::string op_type;
  int64_t calls = 0;   ///< nodes run, summed over runs
  double seconds = 0;  ///< wall time of those nodes (kernel or function body, subgraphs included)
};

/// A table of `profile` (sorted by time, largest first) with each op type's share of
/// `total_seconds`: "op type, calls, total ms, ms per call, share".
std::string format_profile(const std::vector<OpProfile>& profile, double total_seconds);

class Interpreter {
 public:
  /// Prepares `model` for running: converts initializers (external data read relative to
  /// `base_dir`) and checks that every op has a kernel or a function body (find_missing_kernels).
  /// Errors: kUnsupported listing every missing op by name and opset at once; kModelError for bad
  /// initializers.
  static Expected<std::unique_ptr<Interpreter>> create(const onnx::ModelProto& model,
                                                       const std::filesystem::path& base_dir = {},
                                                       const InterpreterOptions& options = {});
  ~Interpreter();

  /// Runs the main graph. Every graph (subgraphs and function bodies too) runs its nodes in a
  /// topological order (model/graph.h's topological_order: the file order wherever that is
  /// valid), so nodes listed before the nodes producing their inputs, which the ONNX IR spec
  /// forbids but ONNX Runtime runs, run too. `inputs` maps graph input names to tensors; every
  /// graph input without an initializer must be given, and dtypes must match the declared ones.
  /// Returns the graph outputs by name. Errors: kInvalidArgument (missing/unknown/mistyped input),
  /// kModelError (undefined tensor, nodes forming a cycle, shape error inside a node), each with
  /// the failing node or graph as context. Errors also with kUnsupported when a graph output is a
  /// sequence or an optional (use run_values).
  Expected<std::map<std::string, Tensor>> run(const std::map<std::string, Tensor>& inputs,
                                              const NodeHook& hook = {});

  /// As run, with values of any kind: graph inputs declared as sequences or optionals take such
  /// values (kInvalidArgument when the kind differs from the declared one), and every graph
  /// output is returned as the value it holds.
  Expected<std::map<std::string, Value>> run_values(const std::map<std::string, Value>& inputs,
                                                    const NodeHook& hook = {});

  /// As run, but stops after the first `end_node` nodes of the main graph in the order they run
  /// (the file order for a graph already sorted topologically; all of them when
  /// `end_node` is at least the node count), calling `hook` for each of their tensor outputs, and
  /// returns no graph outputs. For callers that need the values up to one point of the graph
  /// only (the layerwise pass: a batch of tensors ends well before the last node). `forced`
  /// (optional): values that replace the main graph's node outputs of the same name, dtype and
  /// shape right after their node runs (after `hook` saw the computed one), so the nodes after
  /// read them: the layerwise pass computes a tensor a golden file lacks from the golden values
  /// upstream of it. Errors: as run_values, for the nodes that ran.
  Status run_prefix(const std::map<std::string, Tensor>& inputs, const NodeHook& hook,
                    size_t end_node, const std::map<std::string, Tensor>* forced = nullptr);

  const onnx::ModelProto& model() const { return model_; }
  const InterpreterOptions& options() const { return options_; }

  /// Per-op-type times of the runs so far, largest first; empty unless profiling is on.
  std::vector<OpProfile> profile() const;
  /// Bytes the kernels keep from run to run, derived from constant inputs (packed int8 weights
  /// of MatMulInteger and QLinearMatMul); at most KernelStates::kBudgetBytes (512 MiB).
  size_t kernel_state_bytes() const { return kernel_states_.used(); }
  /// Forgets the times collected so far.
  void reset_profile() { profile_.clear(); }

 private:
  struct Scope;
  struct GraphPlan;
  // Per-graph facts computed once: each node's kernel and what to free after it.
  const GraphPlan& plan_of(const onnx::GraphProto& graph, const OpsetMap& opsets);
  Interpreter() = default;
  // Runs `graph` with its nodes at `opsets`; `depth` counts nested function bodies.
  Expected<std::vector<Value>> run_graph(const onnx::GraphProto& graph, const Scope* parent,
                                         const std::map<std::string, const Value*>& feeds,
                                         const NodeHook* hook, const OpsetMap& opsets, int depth);
  // Runs a node that has no kernel through its function body; one value per node output (empty
  // for omitted outputs). `opsets` are the calling graph's (see build_function_graph).
  Expected<std::vector<Value>> run_function(const onnx::NodeProto& node, int64_t opset,
                                            const std::vector<const Value*>& inputs,
                                            const OpsetMap& opsets, int depth);
  Expected<const std::map<std::string, Value>*> initializers_of(const onnx::GraphProto& graph);
  // run_graph's steps for node `i` of `plan`'s graph (interpreter.cpp): its inputs into
  // scratch.values/movable, widened where its kernel computes in another type (NodeInputs);
  // its kernel called with runners for its subgraphs; its outputs rounded back and stored.
  struct NodeInputs;
  Status gather_inputs(const onnx::NodeProto& node, size_t i, const GraphPlan& plan, Scope& scope,
                       const KernelDef* def, KernelScratch& scratch, NodeInputs& in);
  Status call_kernel(const onnx::NodeProto& node, size_t i, int64_t opset, const KernelDef& def,
                     const Scope& scope, bool has_subgraph, const OpsetMap& opsets, int depth,
                     KernelScratch& scratch, std::vector<Value>& outs);
  Status store_outputs(const onnx::NodeProto& node, size_t i, const GraphPlan& plan, Scope& scope,
                       const NodeInputs& in, bool kernel, const NodeHook* hook,
                       std::vector<Value>& outs);

  onnx::ModelProto model_;
  std::filesystem::path base_dir_;
  InterpreterOptions options_;
  std::map<std::pair<std::string, std::string>, OpProfile> profile_;
  RandomSource random_;         // seeds of unseeded random ops; its draw counts restart every run
  KernelStates kernel_states_;  // what kernels derived from constant inputs (packed weights)
  std::map<const onnx::GraphProto*, std::unique_ptr<GraphPlan>> plans_;
  OpsetMap opsets_;
  std::map<const onnx::GraphProto*, std::map<std::string, Value>> initializers_;
  // Function bodies built so far, by node address, opset and input types.
  std::map<std::string, std::unique_ptr<FunctionGraph>> functions_;
  std::unique_ptr<ThreadPool> pool_;  // options_.threads, started at create
  // Nodes of the main graph the current run goes through (run_prefix); SIZE_MAX: all of them.
  size_t main_end_node_ = SIZE_MAX;
  // run_prefix's `forced` values for the current run (null: none).
  const std::map<std::string, Tensor>* forced_ = nullptr;
};

}  // namespace onnxdbg::reference
