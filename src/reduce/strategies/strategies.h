// The reduction strategies (each a file in this folder, listed once in strategies.def) and the
// modes that sequence them. A strategy proposes candidates through Reducer::try_batch and leaves
// the smallest failing one it found as the reducer's current candidate.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace onnxdbg::reduce {

class Reducer;

#define ODB_STRATEGY(name, help) Status strategy_##name(Reducer& r);
#include "reduce/strategies/strategies.def"
#undef ODB_STRATEGY

struct StrategyEntry {
  std::string name;
  Status (*run)(Reducer&);
  std::string help;
};

/// Every strategy, in strategies.def order.
const std::vector<StrategyEntry>& strategy_table();

/// The strategies a --mode runs in one pass: "bisect" -> {bisect}; "linear" -> {linear};
/// "full" -> {nodes, branches, inputs, attributes, initializers} (ddmin's first rounds bisect the
/// topological order anyway). Errors: kInvalidArgument for another mode.
Expected<std::vector<std::string>> strategies_for_mode(const std::string& mode);

}  // namespace onnxdbg::reduce
