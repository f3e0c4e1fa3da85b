// The strategy table built from strategies.def, and the modes.
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

const std::vector<StrategyEntry>& strategy_table() {
  static const std::vector<StrategyEntry> table = {
#define ODB_STRATEGY(name, kind, mode, help) \
  {#name, &strategy_##name, StrategyKind::kind, StrategyMode::mode, help},
#include "reduce/strategies/strategies.def"
#undef ODB_STRATEGY
  };
  return table;
}

std::vector<std::string> reduce_modes() {
  std::vector<std::string> modes;
  for (const auto& e : strategy_table())
    if (e.mode == StrategyMode::kOwnMode) modes.push_back(e.name);
  modes.emplace_back("full");
  return modes;
}

Expected<std::vector<std::string>> strategies_for_mode(const std::string& mode) {
  std::vector<std::string> full;
  for (const auto& e : strategy_table()) {
    if (e.mode == StrategyMode::kOwnMode && e.name == mode) return std::vector<std::string>{e.name};
    if (e.mode == StrategyMode::kFullMode) full.push_back(e.name);
  }
  if (mode == "full") return full;
  std::string names;
  for (const auto& m : reduce_modes()) names += (names.empty() ? "" : ", ") + m;
  return invalid_argument("--mode '" + mode + "' is not one of " + names);
}

}  // namespace onnxdbg::reduce
