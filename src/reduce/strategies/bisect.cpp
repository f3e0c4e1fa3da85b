// Strategy bisect (Polygraphy's `debug reduce --mode bisect`): binary search for the shortest
// prefix of the topological order that still fails (cutting the output side), then the shortest
// suffix of that (cutting the input side). Between the two, the prefix's graph outputs the failure
// does not need are dropped (as the branches strategy does), so the result ends with the outputs
// the failure needs, as Polygraphy's bisect marks one. With -j N, N lengths are probed per round.
#include "reduce/reducer.h"
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

Status strategy_bisect(Reducer& r) {
  for (int side = 0; side < 2; ++side) {
    const std::vector<int> order = r.current().nodes;
    size_t lo = 1, hi = order.size();  // a window of `hi` nodes is known to fail
    while (lo < hi) {
      const size_t k = std::min<size_t>(static_cast<size_t>(r.parallelism()), hi - lo);
      std::vector<size_t> lengths;
      for (size_t q = 1; q <= k; ++q) {
        const size_t len = lo + (hi - lo) * q / (k + 1);
        if (lengths.empty() || len > lengths.back()) lengths.push_back(len);
      }
      std::vector<Candidate> batch;
      for (size_t len : lengths) {
        Candidate c = r.current();
        c.nodes = side == 0
                      ? std::vector<int>(order.begin(), order.begin() + static_cast<long>(len))
                      : std::vector<int>(order.end() - static_cast<long>(len), order.end());
        batch.push_back(std::move(c));
      }
      ODB_ASSIGN_OR_RETURN(int idx, r.try_batch(batch));
      if (idx >= 0) {
        hi = lengths[static_cast<size_t>(idx)];
        if (idx > 0) lo = lengths[static_cast<size_t>(idx) - 1] + 1;
      } else {
        lo = lengths.back() + 1;
      }
    }
    if (side == 0) ODB_RETURN_IF_ERROR(strategy_branches(r));
  }
  return Status::ok();
}

}  // namespace onnxdbg::reduce
