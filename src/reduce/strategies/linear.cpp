// Strategy linear (Polygraphy's `debug reduce --mode linear`): remove nodes one at a time from
// the end of the topological order while the model still fails, then (after dropping the graph
// outputs the failure does not need, as the branches strategy does) from the start. With -j N,
// removing N, N-1, ..., 1 nodes is tried at once and the largest removal that fails wins.
#include "reduce/reducer.h"
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

Status strategy_linear(Reducer& r) {
  for (int side = 0; side < 2; ++side) {
    while (true) {
      const std::vector<int> order = r.current().nodes;
      if (order.size() <= 1) break;
      const size_t k = std::min<size_t>(static_cast<size_t>(r.parallelism()), order.size() - 1);
      std::vector<Candidate> batch;
      for (size_t remove = k; remove >= 1; --remove) {
        Candidate c = r.current();
        const long keep = static_cast<long>(order.size() - remove);
        c.nodes = side == 0 ? std::vector<int>(order.begin(), order.begin() + keep)
                            : std::vector<int>(order.end() - keep, order.end());
        batch.push_back(std::move(c));
      }
      ODB_ASSIGN_OR_RETURN(int idx, r.try_batch(batch));
      if (idx < 0) break;
    }
    if (side == 0) ODB_RETURN_IF_ERROR(strategy_branches(r));
  }
  return Status::ok();
}

}  // namespace onnxdbg::reduce
