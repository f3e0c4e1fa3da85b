// The kernel interface of the reference interpreter: what one op implementation sees (its node,
// attributes, input values (tensors, sequences, optionals), opset) and the registry that picks the
// kernel for a node by (domain, op type, opset): the kernel whose [since, through] range of schema
// versions holds the version in force at the model's opset (ONNX "Operator Versioning"), so that
// a version whose semantics changed is never run by an older version's kernel.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/onnx.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "onnxdbg/value.h"

namespace onnxdbg::reference {

class KernelContext;

/// Seeds for the random ops that have no `seed` attribute (RandomNormal, RandomUniform, their
/// *Like forms, Bernoulli, Multinomial), one per run so that runs repeat bit for bit: node N's
/// k-th draw of a run (k counts Loop/Scan iterations) is seeded with
/// SplitMix64(run_seed, FNV-1a(N's name, or "#<index in its graph>" when unnamed), k).
struct RandomSource {
  uint64_t run_seed = 0;                             ///< InterpreterOptions::random_seed
  std::map<const onnx::NodeProto*, uint64_t> draws;  ///< draws so far in this run, per node
};

/// A kernel computes a node's outputs from its inputs. It returns an error Status (kModelError
/// for inputs that break the op's spec, kUnsupported for a case not implemented); it never throws.
using KernelFn = Status (*)(KernelContext&);

/// Runs a subgraph (If/Loop/Scan body) with the given inputs, in the scope of the calling node;
/// returns the subgraph's outputs in order. The tensor form errors when a value is not a tensor.
using SubgraphRunner =
    std::function<Expected<std::vector<Tensor>>(const onnx::GraphProto&, std::vector<Tensor>)>;
using ValueSubgraphRunner =
    std::function<Expected<std::vector<Value>>(const onnx::GraphProto&, std::vector<Value>)>;

/// What a kernel prepared from its node's constant inputs (packed weights), kept by the
/// interpreter from run to run; kernels derive their own types from it.
struct KernelState {
  virtual ~KernelState() = default;
};

/// The KernelStates of one interpreter, one per node (by the node's address, which stays put as
/// long as the interpreter holds the model), within a budget of bytes: a kernel whose state
/// would pass it recomputes what it needs on every run instead, so that a model's weights are
/// held at most once more. Used from the thread that runs the graph only.
class KernelStates {
 public:
  /// The budget: 512 MiB.
  static constexpr size_t kBudgetBytes = size_t{512} << 20;
  /// The state kept for `node`, or nullptr.
  KernelState* find(const onnx::NodeProto& node) const {
    auto it = states_.find(&node);
    return it == states_.end() ? nullptr : it->second.state.get();
  }
  /// Keeps `state` (holding `bytes`) for `node` in place of the one kept before; false, keeping
  /// nothing (and dropping the one kept before), when it would pass the budget.
  bool keep(const onnx::NodeProto& node, std::unique_ptr<KernelState> state, size_t bytes) {
    if (auto it = states_.find(&node); it != states_.end()) {
      used_ -= it->second.bytes;
      states_.erase(it);
    }
    if (bytes > kBudgetBytes - used_) return false;
    used_ += bytes;
    states_[&node] = Entry{std::move(state), bytes};
    return true;
  }
  /// True when a state of `bytes` kept for `node` (in place of its current one) would stay
  /// within the budget.
  bool room_for(const onnx::NodeProto& node, size_t bytes) const {
    auto it = states_.find(&node);
    const size_t others = used_ - (it == states_.end() ? 0 : it->second.bytes);
    return bytes <= kBudgetBytes - others;
  }
  /// Bytes held by the states kept.
  size_t used() const { return used_; }

 private:
  struct Entry {
    std::unique_ptr<KernelState> state;
    size_t bytes = 0;
  };
  std::unordered_map<const onnx::NodeProto*, Entry> states_;
  size_t used_ = 0;
};

/// Everything a kernel may read, and where it puts its outputs.
/// The vectors a KernelContext holds, kept by the interpreter from one node to the next so that
/// their memory is allocated once per graph run rather than once per node (KernelContext's
/// scratch constructor and return_scratch).
struct KernelScratch {
  std::vector<const Value*> values;  ///< the node's inputs, filled by the caller
  std::vector<Tensor*> movable;      ///< see KernelContext::movable_input, filled by the caller
  std::vector<uint8_t> constant;     ///< see KernelContext::input_is_constant, filled by the caller
  std::vector<const Tensor*> inputs;
  std::vector<Tensor> outputs;
  std::vector<Value> value_outputs;
};

class KernelContext {
 public:
  /// `inputs` holds one entry per node input (nullptr for an omitted one); the tensor view
  /// input(i) is derived from it.
  KernelContext(const onnx::NodeProto& node, int64_t opset, std::vector<const Value*> inputs,
                SubgraphRunner subgraph_runner, ValueSubgraphRunner value_subgraph_runner)
      : node_(node),
        opset_(opset),
        outputs_(static_cast<size_t>(node.output_size())),
        subgraph_runner_(std::move(subgraph_runner)),
        values_(std::move(inputs)),
        value_outputs_(static_cast<size_t>(node.output_size())),
        value_subgraph_runner_(std::move(value_subgraph_runner)) {
    inputs_.reserve(values_.size());
    for (const Value* v : values_) inputs_.push_back(v ? v->as_tensor() : nullptr);
  }
  /// As above, with the inputs (scratch.values, one per node input) and the movable inputs
  /// (scratch.movable, as set_movable_inputs takes them) in `scratch`, whose vectors it takes and
  /// reuses; return_scratch gives them back, emptied, for the next node.
  KernelContext(const onnx::NodeProto& node, int64_t opset, KernelScratch& scratch,
                SubgraphRunner subgraph_runner, ValueSubgraphRunner value_subgraph_runner)
      : node_(node),
        opset_(opset),
        inputs_(std::move(scratch.inputs)),
        outputs_(std::move(scratch.outputs)),
        subgraph_runner_(std::move(subgraph_runner)),
        values_(std::move(scratch.values)),
        value_outputs_(std::move(scratch.value_outputs)),
        value_subgraph_runner_(std::move(value_subgraph_runner)),
        movable_(std::move(scratch.movable)),
        constant_(std::move(scratch.constant)) {
    outputs_.resize(static_cast<size_t>(node.output_size()));
    value_outputs_.resize(static_cast<size_t>(node.output_size()));
    inputs_.clear();
    for (const Value* v : values_) inputs_.push_back(v ? v->as_tensor() : nullptr);
  }
  /// Moves this context's vectors, emptied but with their memory, back into `scratch` (after
  /// the outputs were taken); the context is not used afterwards.
  void return_scratch(KernelScratch& scratch) {
    auto give = [](auto& from, auto& to) {
      from.clear();
      to = std::move(from);
    };
    give(values_, scratch.values);
    give(movable_, scratch.movable);
    give(constant_, scratch.constant);
    give(inputs_, scratch.inputs);
    give(outputs_, scratch.outputs);
    give(value_outputs_, scratch.value_outputs);
  }

  const onnx::NodeProto& node() const { return node_; }
  /// The model's opset version for this node's domain.
  int64_t opset() const { return opset_; }

  /// Number of inputs listed on the node (including empty optional ones).
  size_t num_inputs() const { return inputs_.size(); }
  /// The i-th input, or nullptr when i is past the end, the input name is empty (an omitted
  /// optional input) or the value is not a tensor (a sequence or an optional).
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  /// The i-th input, or kModelError naming the node when it is missing or not a tensor
  /// ("Add of node 'a' expects a tensor as input 0, got a sequence").
  Expected<const Tensor*> required_input(size_t i) const;
  /// The i-th input of any kind (tensor, sequence, optional), or nullptr when past the end or
  /// omitted. An empty optional is a value (is_optional() and !has_element()), not nullptr.
  const Value* input_value(size_t i) const { return i < values_.size() ? values_[i] : nullptr; }

  size_t num_outputs() const { return outputs_.size(); }
  /// True when the node lists a non-empty name for output i (optional outputs may be omitted).
  bool output_requested(size_t i) const {
    return i < static_cast<size_t>(node_.output_size()) &&
           !node_.output(static_cast<int>(i)).empty();
  }
  /// Sets output i. Outputs not set by the kernel are an error for requested outputs.
  void set_output(size_t i, Tensor t) {
    if (i < outputs_.size()) outputs_[i] = std::move(t);
  }
  /// Sets output i to a value of any kind; wins over set_output for the same i.
  void set_output_value(size_t i, Value v) {
    if (i < value_outputs_.size()) value_outputs_[i] = std::move(v);
  }
  /// Tensors given by set_output (empty where not set).
  std::vector<Tensor>& outputs() { return outputs_; }
  /// Output i as set by set_output_value or else set_output; an empty tensor when neither ran.
  /// Moves the value out (the interpreter calls it once per output).
  Value take_output(size_t i) {
    if (i < value_outputs_.size() && value_outputs_[i].defined())
      return std::move(value_outputs_[i]);
    return i < outputs_.size() ? Value(std::move(outputs_[i])) : Value();
  }

  /// Attribute accessors (ONNX IR "Attributes"); each returns `def` when the attribute is absent.
  bool has_attr(const std::string& name) const { return find_attr(name) != nullptr; }
  const onnx::AttributeProto* find_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t def) const;
  float attr_float(const std::string& name, float def) const;
  std::string attr_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<float> attr_floats(const std::string& name, std::vector<float> def = {}) const;
  std::vector<std::string> attr_strings(const std::string& name) const;
  /// Tensor attribute converted to a Tensor; kNotFound when absent.
  Expected<Tensor> attr_tensor(const std::string& name) const;
  /// Graph attribute, or nullptr when absent.
  const onnx::GraphProto* attr_graph(const std::string& name) const;

  /// Runs a subgraph attribute with the given inputs; outer-scope values are visible to it.
  Expected<std::vector<Tensor>> run_subgraph(const onnx::GraphProto& g, std::vector<Tensor> in) {
    return subgraph_runner_(g, std::move(in));
  }
  /// As run_subgraph, with values of any kind in and out (sequence/optional loop state, If
  /// branches returning sequences).
  Expected<std::vector<Value>> run_subgraph_values(const onnx::GraphProto& g,
                                                   std::vector<Value> in) {
    return value_subgraph_runner_(g, std::move(in));
  }

  /// "node 'conv_3' (Conv)": for error messages.
  std::string describe() const;

  /// Where random_seed() draws from, and this node's index in its graph (for unnamed nodes);
  /// the interpreter sets it before calling the kernel.
  void set_random_source(RandomSource* source, size_t node_index) {
    random_source_ = source;
    node_index_ = node_index;
  }
  /// A 32-bit seed for a random op without a `seed` attribute, as RandomSource describes; each
  /// call counts as one draw of this node. Seed 0-derived values when no source was set.
  uint32_t random_seed() const;

  /// Input i as a tensor the kernel may move from (its buffer reused for an output), or nullptr.
  /// The interpreter offers an input when this node is its last reader, it produced the value in
  /// the current graph and the node reads it once; kernels that return their input unchanged
  /// or reshaped (Reshape, Identity, Squeeze, ...) then save a copy. Others use input(i).
  Tensor* movable_input(size_t i) const { return i < movable_.size() ? movable_[i] : nullptr; }
  /// Set by the interpreter before the kernel runs (one entry per input, nullptr where not
  /// movable).
  void set_movable_inputs(std::vector<Tensor*> movable) { movable_ = std::move(movable); }

  /// True when input i is an initializer (of this graph or an enclosing one) that no graph input
  /// overrides, given to the kernel as stored: the same bytes at the same address on every run
  /// of the interpreter, so that what a kernel derives from it can be kept (state()).
  bool input_is_constant(size_t i) const { return i < constant_.size() && constant_[i] != 0; }
  /// The state this node's kernel kept on an earlier run (keep_state), or nullptr: none kept,
  /// or no interpreter behind this context. The kernel checks that it still fits its inputs.
  KernelState* state() const { return states_ ? states_->find(node_) : nullptr; }
  /// Keeps `state` (holding `bytes`) for this node's later runs, in place of the one kept
  /// before; false, keeping nothing, without an interpreter or past KernelStates' budget.
  bool keep_state(std::unique_ptr<KernelState> state, size_t bytes) {
    return states_ && states_->keep(node_, std::move(state), bytes);
  }
  /// True when keep_state would keep a state of `bytes` (checked before making a large one).
  bool can_keep_state(size_t bytes) const { return states_ && states_->room_for(node_, bytes); }
  /// Set by the interpreter before the kernel runs.
  void set_kernel_states(KernelStates* states) { states_ = states; }

 private:
  const onnx::NodeProto& node_;
  int64_t opset_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> outputs_;
  SubgraphRunner subgraph_runner_;
  // Added after the tensor-only members so their layout is unchanged.
  std::vector<const Value*> values_;
  std::vector<Value> value_outputs_;
  ValueSubgraphRunner value_subgraph_runner_;
  RandomSource* random_source_ = nullptr;
  size_t node_index_ = 0;
  std::vector<Tensor*> movable_;
  std::vector<uint8_t> constant_;
  KernelStates* states_ = nullptr;
};

/// How the interpreter treats float16/bfloat16 for a kernel.
enum class HalfMode {
  kNative,        ///< the kernel handles float16/bfloat16 itself (shape ops, Cast, ...)
  kViaFloat32,    ///< the interpreter upcasts float16/bfloat16 inputs to float32, calls the kernel,
                  ///< and rounds float32 outputs back once (ONNX's intent for half precision)
  kNativeFloat16  ///< the kernel handles float16 itself (computing in float32 and rounding its
                  ///< outputs once, as kViaFloat32 would); bfloat16 is upcast as for kViaFloat32
};

struct KernelDef {
  std::string domain;  ///< "" for the default ONNX domain, "ai.onnx.ml", ...
  std::string op_type;
  int since_version = 1;
  KernelFn fn = nullptr;
  HalfMode half_mode = HalfMode::kViaFloat32;
  /// The newest schema version the kernel implements (inclusive); 0 when undeclared, which means
  /// the newest version at or below validated_opset() (17, ONNX 1.12's suite, for the default
  /// domain) and below the op's next kernel, or just `since_version` for a kernel above it.
  /// Declare it with through(N) only where every version in (default, N] added element types
  /// and nothing else (the kernel refuses the types it does not handle).
  int through_version = 0;
  /// The op sums many terms (reductions, normalisation statistics, Softmax sums, MatMul, Gemm,
  /// Conv, ...). With InterpreterOptions::accumulate == Accumulate::kDouble the interpreter runs
  /// it on float64 copies of its float32/float16/bfloat16 inputs and rounds its float64 outputs
  /// once to the input type; the kernel itself needs no change. Set with accumulates_in_double().
  bool accumulates = false;
  KernelDef& accumulates_in_double() {
    accumulates = true;
    return *this;
  }
  KernelDef& through(int version) {
    through_version = version;
    return *this;
  }
};

/// All kernels, keyed by domain and op type. Filled once by register_all_kernels().
class KernelRegistry {
 public:
  /// Registers a kernel valid from `since_version` of `op_type` in `domain` on.
  /// Returns the new entry, so that flags chain: r.add("Conv", 11, conv).accumulates_in_double().
  KernelDef& add(const std::string& op_type, int since_version, KernelFn fn,
                 HalfMode half_mode = HalfMode::kViaFloat32, const std::string& domain = "");
  /// The kernel for a node at `opset`: the one whose [since, through] holds the version in force
  /// (version_in_force, op_versions.h), or nullptr when none does (that version's semantics
  /// changed, or `opset` is newer than any ONNX known). Ops ONNX does not define (custom domains)
  /// take the kernel with the highest since_version <= opset.
  const KernelDef* find(const std::string& domain, const std::string& op_type, int64_t opset) const;
  /// The kernels of an op, oldest first (empty when none).
  const std::vector<KernelDef>& kernels(const std::string& domain,
                                        const std::string& op_type) const;
  /// The newest schema version `k` covers: KernelDef::through_version resolved (see there).
  int through(const KernelDef& k) const;
  /// Sorted op types registered for `domain`.
  std::vector<std::string> op_types(const std::string& domain = "") const;
  /// The registry with every kernel of ops/ registered.
  static const KernelRegistry& global();

 private:
  std::map<std::pair<std::string, std::string>, std::vector<KernelDef>> kernels_;
};

}  // namespace onnxdbg::reference
