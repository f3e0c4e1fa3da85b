// The reduction strategies (each a file in this folder, listed once in strategies.def) and the
// modes that sequence them. A strategy proposes candidates through Reducer::try_batch and leaves
// the smallest failing one it found as the reducer's current candidate.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "onnxdbg/status.h"
#include "reduce/ddmin.h"
#include "reduce/reducer.h"

namespace onnxdbg::reduce {

class Reducer;

#define ODB_STRATEGY(name, kind, mode, help) Status strategy_##name(Reducer& r);
#include "reduce/strategies/strategies.def"
#undef ODB_STRATEGY

/// What a strategy proposes (strategies.def's kind column).
enum class StrategyKind {
  kRemovesNodes,  ///< subsets of the current nodes; nothing to do once one node is left
  kEdits,         ///< changes to what the kept nodes see (outputs, inputs, attributes, weights)
};
/// Which --mode runs a strategy (strategies.def's mode column).
enum class StrategyMode {
  kOwnMode,   ///< `--mode <name>` runs it alone
  kFullMode,  ///< `--mode full` runs it, in strategies.def order
};

struct StrategyEntry {
  std::string name;
  Status (*run)(Reducer&);
  StrategyKind kind;
  StrategyMode mode;
  std::string help;
};

/// Every strategy, in strategies.def order.
const std::vector<StrategyEntry>& strategy_table();

/// The strategies a --mode runs in one pass, from strategies.def: a kOwnMode strategy's name ->
/// that strategy alone ("bisect", "linear"); "full" -> every kFullMode strategy in the file's
/// order (nodes, branches, inputs, attributes, initializers; ddmin's first rounds bisect the
/// topological order anyway). Errors: kInvalidArgument for another mode, listing the modes.
Expected<std::vector<std::string>> strategies_for_mode(const std::string& mode);

/// The modes strategies_for_mode accepts: the kOwnMode strategies' names, then "full".
std::vector<std::string> reduce_modes();

/// ddmin over edits of the current candidate: a subset of `items` is what stays as it is, and each
/// item left out is applied to a copy of the current candidate by `apply` (drop an output, freeze
/// an input, ...). With `try_empty`, applying all of them is tried first.
/// Errors: the reducer's.
template <class T>
Status ddmin_edits(Reducer& r, const std::vector<T>& items,
                   const std::function<void(Candidate&, const T&)>& apply, bool try_empty) {
  BatchTest<T> test = [&](const std::vector<std::vector<T>>& subsets) -> Expected<int> {
    std::vector<Candidate> batch;
    for (const auto& keep : subsets) {
      Candidate c = r.current();
      for (const auto& item : items)
        if (std::find(keep.begin(), keep.end(), item) == keep.end()) apply(c, item);
      batch.push_back(std::move(c));
    }
    return r.try_batch(batch);
  };
  auto kept = ddmin<T>(items, test, try_empty);
  return kept ? Status::ok() : kept.status();
}

}  // namespace onnxdbg::reduce
