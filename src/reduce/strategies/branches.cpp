// Strategy branches: ddmin over the candidate's graph outputs. Dropping an output removes the
// side branch only it needed, in one step, where the nodes strategy would need one per node.
#include "reduce/ddmin.h"
#include "reduce/reducer.h"
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

Status strategy_branches(Reducer& r) {
  const std::vector<std::string> outputs = r.current_built().outputs;
  if (outputs.size() < 2) return Status::ok();
  BatchTest<std::string> test =
      [&](const std::vector<std::vector<std::string>>& subsets) -> Expected<int> {
    std::vector<Candidate> batch;
    for (const auto& keep : subsets) {
      Candidate c = r.current();
      for (const auto& o : outputs)
        if (std::find(keep.begin(), keep.end(), o) == keep.end()) c.dropped_outputs.insert(o);
      batch.push_back(std::move(c));
    }
    return r.try_batch(batch);
  };
  auto kept = ddmin<std::string>(outputs, test);
  return kept ? Status::ok() : kept.status();
}

}  // namespace onnxdbg::reduce
