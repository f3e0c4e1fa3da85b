// The strategy table built from strategies.def, and the modes.
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

const std::vector<StrategyEntry>& strategy_table() {
  static const std::vector<StrategyEntry> table = {
#define ODB_STRATEGY(name, help) {#name, &strategy_##name, help},
#include "reduce/strategies/strategies.def"
#undef ODB_STRATEGY
  };
  return table;
}

Expected<std::vector<std::string>> strategies_for_mode(const std::string& mode) {
  if (mode == "bisect") return std::vector<std::string>{"bisect"};
  if (mode == "linear") return std::vector<std::string>{"linear"};
  if (mode == "full")
    return std::vector<std::string>{"nodes", "branches", "inputs", "attributes", "initializers"};
  return invalid_argument("--mode '" + mode + "' is not one of bisect, linear, full");
}

}  // namespace onnxdbg::reduce
