// Strategy nodes: ddmin over arbitrary subsets of the current nodes. A removed node's consumers
// read its golden value as a new graph input, so any subset, not only a window of the topological
// order, is a candidate; the result is 1-minimal (removing any one node makes it pass).
#include "reduce/ddmin.h"
#include "reduce/reducer.h"
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

Status strategy_nodes(Reducer& r) {
  BatchTest<int> test = [&](const std::vector<std::vector<int>>& subsets) -> Expected<int> {
    std::vector<Candidate> batch;
    for (const auto& s : subsets) {
      Candidate c = r.current();
      c.nodes = s;
      batch.push_back(std::move(c));
    }
    return r.try_batch(batch);
  };
  auto kept = ddmin<int>(r.current().nodes, test);
  return kept ? Status::ok() : kept.status();
}

}  // namespace onnxdbg::reduce
