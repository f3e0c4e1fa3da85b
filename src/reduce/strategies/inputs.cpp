// Strategy inputs: turn graph inputs into initializers holding their golden value (sample 0), so
// the reduced model needs no input data where the failure does not depend on the input being
// fed at run time (a runtime may fold constants, so the oracle decides input by input).
#include "reduce/ddmin.h"
#include "reduce/reducer.h"
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

Status strategy_inputs(Reducer& r) {
  const std::vector<std::string> inputs = r.current_built().inputs;
  if (inputs.empty() || r.original().golden.empty()) return Status::ok();
  BatchTest<std::string> test =
      [&](const std::vector<std::vector<std::string>>& subsets) -> Expected<int> {
    std::vector<Candidate> batch;
    for (const auto& stay : subsets) {
      Candidate c = r.current();
      for (const auto& i : inputs)
        if (std::find(stay.begin(), stay.end(), i) == stay.end()) c.frozen_inputs.insert(i);
      batch.push_back(std::move(c));
    }
    return r.try_batch(batch);
  };
  auto kept = ddmin<std::string>(inputs, test, /*try_empty=*/true);
  return kept ? Status::ok() : kept.status();
}

}  // namespace onnxdbg::reduce
