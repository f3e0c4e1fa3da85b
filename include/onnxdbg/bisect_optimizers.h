// onnxdbg::api::bisect_optimizers: which of ONNX Runtime's graph optimizations changed the
// numbers. Confirms that a session configuration (default onnxruntime:opt=all) disagrees with a
// baseline (default onnxruntime:opt=disabled, or loaded golden outputs), takes the graph
// transformers ONNX Runtime's own log says changed this model, and finds a 1-minimal set of them
// whose disabling (`onnxruntime:disable=`, ORT's optimization.disable_specified_optimizers)
// restores agreement, with reduce's minimal_by_bisection (group testing by binary splitting over
// delta debugging's items, reduce/ddmin.h). Then it says what the culprits did: the nodes they
// fused, by the original model's nodes. `onnxdbg bisect-optimizers` is this call.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "onnxdbg/common.h"
#include "onnxdbg/model.h"
#include "onnxdbg/run.h"

namespace onnxdbg::api {

struct BisectOptimizersOptions {
  std::filesystem::path model;
  /// The configuration under suspicion: an onnxruntime backend spec with its options (its
  /// `disable=` names stay disabled in every session). Default onnxruntime:opt=all.
  BackendSpec backend;
  /// The baseline it is compared with: any backend spec (default onnxruntime:opt=disabled; the
  /// reference works too). Not used when `comparison` loads or gives golden outputs.
  BackendSpec against;
  InputOptions inputs;           ///< as run's (--input-shapes, --val-range, --load-inputs, ...)
  ComparisonOptions comparison;  ///< as run's (--atol, --rtol, --check-error-stat, --load-outputs)
  double timeout_seconds = 0;    ///< each session's load and run (--timeout); 0: 300 s
  uint64_t max_memory = 0;       ///< as run's (--max-memory: generated inputs, a reference)
  uint64_t max_iterations = 0;   ///< as run's (--max-iterations: a reference --against)
  /// Folder for the optimized models with and without the culprits
  /// (optimized_with_culprits.onnx, optimized_without_culprits.onnx); empty: a temporary folder,
  /// removed when the call returns.
  std::filesystem::path save_models;
};

/// One session of the search: the names disabled and whether the outputs then agreed.
struct OptimizerTrial {
  std::vector<std::string> disabled;
  bool agrees = false;
  std::string line;  ///< the run's verdict line
  /// The transformers that still changed the model in that session (ONNX Runtime's log).
  std::vector<std::string> applied;
};

/// One culprit's part: disabling it alone, and enabling it alone with the other culprits
/// disabled (what makes the set 1-minimal).
struct CulpritEffect {
  std::string name;
  bool alone_restores = false;   ///< disabling only this one restores agreement
  std::string alone;             ///< that run's verdict line
  bool reenabled_breaks = true;  ///< with the others disabled, this one enabled disagrees
  std::string reenabled;         ///< that run's verdict line ("" with a single culprit)
};

/// A node the culprits made, and the nodes it stands for.
struct FusedNode {
  /// In the model optimized with the culprits: "#3 com.microsoft.FusedConv 'conv'".
  std::string node;
  /// The nodes it replaced, named as in the original model ("#4 Relu 'relu'") where ONNX
  /// Runtime kept their output names, else as in the model optimized without the culprits
  /// ("ONNX Runtime's #2 com.microsoft.QLinearConv 'c'"). Empty: a node the culprits added.
  std::vector<std::string> replaced;
};

enum class BisectOutcome {
  kNoDifference,  ///< the configuration agrees with the baseline: nothing to bisect (exit 0)
  kFound,         ///< `culprits` restore agreement when disabled (exit 1: the difference stands)
  kNotFound,      ///< disabling every transformer that changed the model does not restore agreement
};

struct BisectOptimizersResult {
  std::string model;
  /// The model as read once for every session (for the HTML view); empty when the call failed
  /// before its first comparison.
  Model loaded_model;
  std::string backend;  ///< the configuration's spec
  std::string against;  ///< the baseline's spec, or "golden outputs from FILE"
  BisectOutcome outcome = BisectOutcome::kNoDifference;
  std::string difference;  ///< the first comparison's verdict line
  /// The graph transformers ONNX Runtime's log says changed the model under `backend`, in the
  /// order they first did (those that cannot be disabled left out), then those that changed it
  /// once the first were disabled (a fusion taking over another's pattern), and the session
  /// config entries `backend` sets and the baseline does not ("config.KEY": removing it).
  std::vector<std::string> candidates;
  /// How many of `candidates` changed the model under `backend` itself (the rest changed it
  /// only once those were disabled, or are config entries).
  size_t direct_candidates = 0;
  std::vector<std::string> culprits;  ///< 1-minimal; rules named when a rule set was one
  std::vector<CulpritEffect> effects;
  std::vector<FusedNode> fused;  ///< what the culprits made
  /// The first node of the original model (in its order) whose output differs at all between
  /// the sessions with and without the culprits (within the tolerance too: where the difference
  /// starts), comparing the tensors both optimized models still have (a fused node's outputs keep
  /// its last original node's names): "#8 Add 'ln_add'", and the comparison of its output in
  /// words; empty when none differs or it could not be run (a note says why).
  std::string first_divergent_node;
  std::string first_divergent_detail;
  std::vector<std::string> removed;    ///< original nodes the culprits removed without a new one
  std::vector<OptimizerTrial> trials;  ///< every search session, in order
  int confirm_sessions = 0;  ///< sessions of the first comparison (2, or 1 against golden)
  int search_sessions = 0;   ///< sessions of the search (all candidates disabled, bisection)
  int check_sessions = 0;    ///< sessions checking the result (each culprit alone, re-enabled)
  int model_sessions = 0;    ///< sessions that wrote the optimized models and found the first node
  /// 2 k log2(N) + 2 for k culprits among N candidates: what the search stays within (it takes
  /// at most k (ceil(log2 N) + 1) + 1 sessions; opening a rule set adds its own bisection).
  double session_bound = 0;
  /// k of the bound: the culprits the search found, before a rule set was opened or a culprit
  /// left the set when checked.
  size_t search_found = 0;
  double seconds = 0;                                       ///< wall time of the call
  std::filesystem::path optimized_with, optimized_without;  ///< empty when not kept
  std::string verdict_line;                                 ///< one sentence, printed last
  Messages messages;
};

/// Runs the bisection described above. Every session is an api::run of one backend on the same
/// input samples (the first comparison's), compared with the baseline's outputs under the same
/// tolerances. Errors: those of api::run for the first comparison (a malformed model, bad
/// options: kInvalidArgument, kModelError); kInvalidArgument when `backend` is not onnxruntime;
/// kBackendError naming the backend and its reason when the configuration or the baseline cannot
/// load or run the model; kCancelled on ctx's cancel token.
Expected<BisectOptimizersResult> bisect_optimizers(const BisectOptimizersOptions& options,
                                                   const CallContext& ctx = {});

/// The JSON of `bisect-optimizers --json`: model, backend, against, outcome ("no_difference",
/// "found", "not_found"), difference, candidates, direct_candidates, culprits, effects [{name,
/// alone_restores, alone, reenabled_breaks, reenabled}], fused [{node, replaced}], removed,
/// first_divergent_node {node, detail} (null when none), trials [{disabled, agrees, line,
/// applied}], sessions {confirm, search, checks, models, bound, k}, seconds, optimized_models
/// {with, without}, verdict_line.
nlohmann::json to_json(const BisectOptimizersResult& result);

/// The viewer's overlay: the original nodes the culprits fused or removed, and the first
/// divergent node, highlighted in the original model (`bisect-optimizers --html`).
report::ViewerOverlays bisect_overlays(const BisectOptimizersResult& result);

/// What `onnxdbg bisect-optimizers` prints: the difference, the candidates, the culprits with
/// their effects, the fused nodes, the session counts and the verdict line last.
void print_text(const BisectOptimizersResult& result, std::ostream& os);

}  // namespace onnxdbg::api
