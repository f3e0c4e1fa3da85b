// What a lint rule sees: the model, a scope-aware view of each graph (who produces each name,
// which outer values each node's subgraphs use), schema lookup at the model's opset, one shared
// shape-inference run, and report(). Rules live in lint/rules/<name>.cpp, listed in rules.def.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/onnx.h"
#include "lint/lint.h"
#include "model/graph.h"
#include "model/model.h"
#include "onnx/defs/schema.h"

namespace onnxdbg::lint {

/// Producer codes for names that no node produces.
constexpr int64_t kGraphInput = -2;
constexpr int64_t kInitializer = -3;

/// One graph (main or a subgraph) with the facts most rules need, computed once by the driver
/// with the graph toolkit (model/graph.h: walk_graphs, producers, implicit_inputs, free_names).
struct GraphInfo {
  const onnx::GraphProto* graph = nullptr;
  std::string path;  ///< "main", "main/If_3:then_branch" (subgraph_path)
  int index = 0;     ///< walk_graphs' order (preorder); 0 is the main graph
  const GraphInfo* parent = nullptr;
  int64_t parent_node = -1;  ///< index (in parent) of the node that owns this subgraph
  /// First producer of every name defined in this graph: node index, kGraphInput or kInitializer
  /// (an initializer that is also a graph input counts as kGraphInput).
  std::unordered_map<std::string, int64_t> producer;
  /// Per node: names its subgraphs use but do not define (ONNX "implicit inputs"), deduplicated.
  std::vector<std::vector<std::string>> implicit_inputs;
  /// Names this graph uses but does not define (resolved in an outer scope, or undefined).
  std::vector<std::string> free_names;

  bool defines(const std::string& name) const { return producer.count(name) != 0; }
  /// This graph or the innermost ancestor that defines `name`; nullptr when none does.
  const GraphInfo* scope_of(const std::string& name) const;
  /// Every name visible inside this graph (its own and all outer scopes'), for "did you mean".
  std::vector<std::string> visible_names() const;
  const onnx::NodeProto& node(int64_t i) const { return graph->node(static_cast<int>(i)); }
  int64_t node_count() const { return graph->node_size(); }
};

/// The schema a node is checked against.
struct SchemaLookup {
  const onnx::OpSchema* schema = nullptr;  ///< at the (clamped) opset; nullptr when none
  int64_t opset = 0;                       ///< the model's opset for the node's domain
  int64_t checked_opset = 0;     ///< opset used for lookup: min(opset, newest this ONNX knows)
  bool beyond_known = false;     ///< the model's opset is newer than this ONNX knows
  bool known_domain = false;     ///< a domain whose schemas libonnx has
  bool domain_imported = false;  ///< the model imports the node's domain
};

/// Result of one strict shape-inference run on a copy of the model stripped of value_info and
/// graph output types (so it infers rather than trusts them).
struct InferenceRun {
  struct NodeError {
    int graph = 0;      ///< GraphInfo::index
    int64_t node = -1;  ///< node index in that graph
    std::string message;
  };
  std::vector<NodeError> node_errors;
  std::string other_error;  ///< an error not tied to a node ("" when none)
  /// Inferred types of each graph (by GraphInfo::index): value_info and graph outputs.
  std::vector<std::unordered_map<std::string, onnx::TypeProto>> inferred;
  /// Ops without a schema: ONNX 1.12 then stops reporting inference errors altogether.
  std::vector<std::string> unsupported_ops;
};

/// What lint learnt by making a suggested fix's edit on a copy of the model and linting the
/// result, as `onnxdbg surgeon` does before it writes (it refuses a result with lint errors).
struct FixTrial {
  /// False when the edit was not made: the model has no file a command could name (an in-memory
  /// model), or this is itself the lint of a trial's result.
  bool tried = false;
  std::string edit_error;     ///< why the edit failed ("" when it succeeded or was not tried)
  int64_t errors_after = -1;  ///< lint errors of the edited copy; -1 when not linted
  /// The command would exit 0 and write a model without lint errors.
  bool works() const { return tried && edit_error.empty() && errors_after == 0; }
};

class RuleContext {
 public:
  /// `trials`: whether try_fix may make edits (off for the lint of a trial's result).
  RuleContext(const LoadedModel& model, std::vector<std::unique_ptr<GraphInfo>> graphs,
              bool trials = true);

  const LoadedModel& model() const { return model_; }
  const onnx::ModelProto& proto() const { return model_.proto; }
  const std::vector<std::unique_ptr<GraphInfo>>& graphs() const { return graphs_; }
  const GraphInfo& main_graph() const { return *graphs_.front(); }

  /// The model's opset for `domain` ("" and "ai.onnx" are the default domain); 0 if not imported.
  int64_t opset(const std::string& domain) const;
  /// IR version or an opset of a known domain newer than the linked ONNX knows.
  bool newer_than_known() const { return newer_than_known_; }
  /// Schema of `node` at the model's opset (clamped to the newest known).
  SchemaLookup lookup(const onnx::NodeProto& node) const;
  /// True when `node` calls a model-local function (ModelProto.functions).
  bool is_local_function(const onnx::NodeProto& node) const;

  /// Strict shape inference with data propagation, run once on first use.
  const InferenceRun& inference();

  /// Makes `edit` (a function of lint/fixes.h) on a copy of the model and lints the copy with
  /// every rule, once per `key` (later calls with the same key return the first result). Not
  /// tried when the model has no path or trials are off. A rule names a command only when its
  /// trial works(), so every command lint suggests runs and removes the finding.
  const FixTrial& try_fix(const std::string& key,
                          const std::function<Status(onnx::ModelProto&)>& edit);
  /// A copy-pasteable surgeon command on this model: "onnxdbg surgeon sanitize m.onnx --toposort
  /// -o m.sorted.onnx" for ("sanitize", "--toposort", "sorted"); the output sits next to the model
  /// as "<stem>.<suffix>.onnx". Paths are shell-quoted where they need it.
  std::string surgeon_command(const std::string& command, const std::string& flags,
                              const std::string& out_suffix) const;

  /// Records a finding of the rule being run. `node` is an index in `g`, or -1.
  void report(Severity s, const GraphInfo& g, int64_t node, std::string message);
  /// "node #3 Conv 'conv_3'": "node " and node_label (model/graph.h).
  static std::string describe(const onnx::NodeProto& node, int64_t index);

  // Used by the driver.
  void set_rule(std::string name) { rule_ = std::move(name); }
  /// Findings keyed by GraphInfo::index, in report order.
  std::vector<std::pair<int, Finding>> take_findings() { return std::move(findings_); }

 private:
  const LoadedModel& model_;
  std::vector<std::unique_ptr<GraphInfo>> graphs_;
  std::unordered_map<std::string, int64_t> opsets_;
  std::unordered_set<std::string> local_functions_;  ///< "domain:name"
  bool newer_than_known_ = false;
  std::optional<InferenceRun> inference_;
  bool trials_ = true;
  std::map<std::string, FixTrial> fix_trials_;
  std::string rule_;
  std::vector<std::pair<int, Finding>> findings_;
};

/// lint_model with every rule and no fix trials: how a trial lints its edited copy (so trials do
/// not nest). Errors: those of lint_model.
Expected<std::vector<Finding>> lint_without_trials(const LoadedModel& model);

/// Where a rule runs: once per model (given the main graph) or once per graph.
enum class RuleScope { kModel, kGraph };
using RuleFn = void (*)(RuleContext&, const GraphInfo&);

// --- helpers shared by rules -------------------------------------------------------------------

/// "ai.onnx" for "", else the domain itself; for messages.
std::string domain_display(const std::string& domain);

/// Levenshtein distance, giving up (returning limit + 1) once it must exceed `limit`.
size_t edit_distance(const std::string& a, const std::string& b, size_t limit);
/// The candidate closest to `name` when close enough to be a plausible typo (distance at most
/// max(2, len/3)) or when one is a prefix of the other (shortest wins); ties go to the first.
/// Names equal to `name` are skipped.
std::optional<std::string> closest_name(const std::string& name,
                                        const std::vector<std::string>& candidates);

/// Every version of every op libonnx knows, for "introduced in opset N" and op-name hints.
struct OpHistory {
  std::vector<int> since_versions;  ///< sorted
  std::vector<bool> deprecated;     ///< parallel to since_versions
};
/// (canonical domain) -> op type -> history. Built once.
const std::map<std::string, std::map<std::string, OpHistory>>& op_histories();
/// Newest opset libonnx knows for `domain`, 0 for a domain it does not know.
int64_t newest_known_opset(const std::string& domain);

/// Names `g` consumes: node inputs, implicit inputs of its nodes' subgraphs, graph outputs.
std::unordered_set<std::string> used_names(const GraphInfo& g);

/// "tensor(float)[1,3,?,224]" for messages.
std::string type_to_string(const onnx::TypeProto& t);

/// The attribute `name` of `node`, or nullptr.
const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name);

/// Tensor shapes known in one graph, from its initializers (their dims), declared types (graph
/// inputs, value_info, outputs) and the shared shape-inference run; -1 for an unknown dim. Built
/// once per graph by rules that need ranks or dims.
class ShapeIndex {
 public:
  ShapeIndex(RuleContext& ctx, const GraphInfo& g);
  /// The shape of `name`, nullptr when even its rank is unknown (or it is not a tensor).
  const std::vector<int64_t>* find(const std::string& name) const;

 private:
  std::unordered_map<std::string, std::vector<int64_t>> shapes_;
};

/// Whether `node` has the form `schema` defines: input and output counts within its ranges, every
/// attribute one the schema has, every required attribute present.
bool fits_schema(const onnx::NodeProto& node, const onnx::OpSchema& schema);
/// The lowest opset of `domain` above `after` that introduced a version of the node's op (not a
/// deprecated one) the node fits: the opset whose form the node has. 0 when none does.
int64_t form_opset(const onnx::NodeProto& node, const std::string& domain, int64_t after);

/// An INTS attribute's values as written, "[2, -1]", for messages.
std::string ints_to_string(const onnx::AttributeProto& a);
/// "[1, 3, ?, 224]" (-1 as "?"), for messages.
std::string dims_to_string(const std::vector<int64_t>& dims);
/// A stored tensor's dims as written, "[2, -1]" (a negative one kept: it is the problem), for
/// messages.
std::string stored_dims_to_string(const google::protobuf::RepeatedField<int64_t>& dims);

}  // namespace onnxdbg::lint
