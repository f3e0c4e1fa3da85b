// reduce_model(): passes of strategies until nothing shrinks, then confirmation and min-good.
#include "reduce/reduce.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "model/graph.h"
#include "model/model.h"
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

namespace {

// The strategies named in options.strategies, in that order.
Expected<std::vector<const StrategyEntry*>> strategies_of(const ReduceOptions& options) {
  std::vector<const StrategyEntry*> pass;
  for (const auto& name : options.strategies) {
    const StrategyEntry* found = nullptr;
    for (const auto& e : strategy_table())
      if (e.name == name) found = &e;
    if (!found) {
      std::string names;
      for (const auto& e : strategy_table()) names += (names.empty() ? "" : ", ") + e.name;
      return invalid_argument("unknown strategy '" + name + "' (strategies: " + names + ")");
    }
    pass.push_back(found);
  }
  return pass;
}

// Passes of the strategies until one removes no node; `order` gets each strategy's name once, in
// the order they first ran.
Status run_passes(Reducer& r, const std::vector<const StrategyEntry*>& pass, ReduceReport& rep,
                  std::vector<std::string>& order) {
  while (true) {
    ++rep.passes;
    const size_t before = r.current().nodes.size();
    for (const StrategyEntry* s : pass) {
      if (r.current().nodes.size() <= 1 && s->kind == StrategyKind::kRemovesNodes) continue;
      r.set_phase(s->name);
      if (std::find(order.begin(), order.end(), s->name) == order.end()) order.push_back(s->name);
      auto& st = r.stats()[s->name];
      st.name = s->name;
      ++st.runs;
      const auto t0 = std::chrono::steady_clock::now();
      Status status = s->run(r);
      st.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ODB_RETURN_IF_ERROR(status);
    }
    if (r.current().nodes.size() >= before) return Status::ok();
  }
}

// --min-good: the passing candidate closest to the reduced model, written (or a note why not).
void write_min_good(Reducer& r, const Original& original, const ReduceOptions& options,
                    ReduceReport& rep) {
  const Candidate* good = r.min_good();
  if (!good) {
    r.add_note("--min-good: no passing candidate was seen, so none was written");
    return;
  }
  auto built = build_candidate(original, *good);
  if (!built) return;
  if (Status st = save_candidate(*built, options.min_good); st) {
    rep.min_good = options.min_good.string();
    rep.min_good_nodes = static_cast<int64_t>(built->nodes.size());
  } else {
    r.add_note("--min-good: " + st.message());
  }
}

// The reduced model's nodes, inputs, outputs and the reducer's counts, into `rep`.
void fill_result(const Reducer& r, const Original& original, ReduceReport& rep) {
  const auto& g = original.model.graph();
  for (int i : r.current_built().nodes) {
    rep.kept_nodes.push_back(node_label(g.node(i), i));
    rep.kept_op_types.push_back(g.node(i).op_type());
  }
  rep.inputs = r.current_built().inputs;
  rep.feeds = r.current_built().feeds;
  rep.outputs = r.current_built().outputs;
  rep.nodes_after = static_cast<int64_t>(r.current_built().nodes.size());
  rep.oracle_calls = r.oracle_calls();
  rep.cache_hits = r.cache_hits();
  rep.invalid_skipped = r.invalid();
  rep.invalid_reasons = r.invalid_reasons();
  rep.signature = r.signature();
  rep.failed_differently = r.failed_differently();
  rep.timeouts = r.timeouts();
  rep.seconds = r.elapsed_seconds();
}

}  // namespace

Expected<ReduceReport> reduce_model(const Original& original, Oracle& oracle,
                                    const ReduceOptions& options) {
  ODB_ASSIGN_OR_RETURN(const std::vector<const StrategyEntry*> pass, strategies_of(options));
  ReduceReport rep;
  rep.oracle = oracle.describe();
  rep.nodes_before = original.model.graph().node_size();
  rep.golden_note = original.golden_error;
  rep.output = options.reducer.output.string();
  Reducer r(original, oracle, options.reducer);
  if (!original.verify_note.empty()) r.add_note(original.verify_note);
  r.set_phase("original");
  ODB_ASSIGN_OR_RETURN(OracleVerdict first, r.start());
  rep.original_fails = first.fails;
  rep.original_detail = first.detail;
  std::vector<std::string> order;
  if (first.fails) {
    ODB_RETURN_IF_ERROR(run_passes(r, pass, rep, order));
    rep.saw_passing = r.saw_passing();
    if (options.note_if_all_fail && !r.saw_passing() && r.oracle_calls() > 2)
      r.add_note("the oracle failed every one of the " + std::to_string(r.oracle_calls()) +
                 " candidates it tested, the smallest included, so it may fail for a reason "
                 "other than the model (a check that cannot start, a missing module, a wrong "
                 "path); its verdict on the original was: " +
                 first.detail);
    if (options.confirm) {
      r.set_phase("confirm");
      ODB_ASSIGN_OR_RETURN(OracleVerdict again, r.confirm_current());
      rep.flaky = !again.fails;
    }
    if (!options.min_good.empty()) write_min_good(r, original, options, rep);
  }
  fill_result(r, original, rep);
  if (rep.failed_differently > 0)
    r.add_note(std::to_string(rep.failed_differently) +
               " candidates failed, but not as the original did (" + rep.signature +
               "), so they counted as passes (the journal has each; --any-failure accepts them)");
  for (const auto& name : order) rep.strategies.push_back(r.stats()[name]);
  rep.notes = r.notes();
  return rep;
}

nlohmann::json report_json(const ReduceReport& rep) {
  nlohmann::json j;
  j["original_fails"] = rep.original_fails;
  j["original_detail"] = rep.original_detail;
  j["oracle"] = rep.oracle;
  j["nodes_before"] = rep.nodes_before;
  j["nodes_after"] = rep.nodes_after;
  j["kept_nodes"] = rep.kept_nodes;
  j["kept_op_types"] = rep.kept_op_types;
  j["inputs"] = rep.inputs;
  j["outputs"] = rep.outputs;
  j["passes"] = rep.passes;
  j["oracle_calls"] = rep.oracle_calls;
  j["cache_hits"] = rep.cache_hits;
  j["invalid_skipped"] = rep.invalid_skipped;
  j["invalid_reasons"] = rep.invalid_reasons;
  j["signature"] = rep.signature.empty() ? nlohmann::json(nullptr) : nlohmann::json(rep.signature);
  j["failed_differently"] = rep.failed_differently;
  j["timeouts"] = rep.timeouts;
  j["seconds"] = rep.seconds;
  j["strategies"] = nlohmann::json::array();
  for (const auto& s : rep.strategies)
    j["strategies"].push_back({{"name", s.name},
                               {"runs", s.runs},
                               {"oracle_calls", s.oracle_calls},
                               {"nodes_removed", s.nodes_removed},
                               {"seconds", s.seconds}});
  j["output"] = rep.original_fails ? nlohmann::json(rep.output) : nlohmann::json(nullptr);
  j["min_good"] = rep.min_good.empty() ? nlohmann::json(nullptr) : nlohmann::json(rep.min_good);
  j["golden_values"] = rep.golden_note.empty();
  j["notes"] = rep.notes;
  j["flaky"] = rep.flaky;
  return j;
}

}  // namespace onnxdbg::reduce
