// Strategy nodes: a fast narrowing to one failing part of the topological order (width -j + 1
// per round), then ddmin over arbitrary subsets of the current nodes. A removed node's consumers
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
  // Most failures need few nodes: narrow down first (log_(j+1) rounds), then make it 1-minimal.
  auto narrowed = narrow<int>(r.current().nodes, test, static_cast<size_t>(r.parallelism()));
  if (!narrowed) return narrowed.status();
  auto kept = ddmin<int>(r.current().nodes, test);
  return kept ? Status::ok() : kept.status();
}

}  // namespace onnxdbg::reduce
