// Strategy inputs: turn graph inputs into initializers holding their golden value (sample 0), so
// the reduced model needs no input data where the failure does not depend on the input being
// fed at run time (a runtime may fold constants, so the oracle decides input by input).
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

Status strategy_inputs(Reducer& r) {
  const std::vector<std::string> inputs = r.current_built().inputs;
  if (inputs.empty() || r.original().golden.empty() || r.original().keep_inputs)
    return Status::ok();
  return ddmin_edits<std::string>(
      r, inputs, [&](Candidate& c, const std::string& item) { c.frozen_inputs.insert(item); },
      /*try_empty=*/true);
}

}  // namespace onnxdbg::reduce
