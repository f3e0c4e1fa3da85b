// Strategy branches: ddmin over the candidate's graph outputs. Dropping an output removes the
// side branch only it needed, in one step, where the nodes strategy would need one per node.
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

Status strategy_branches(Reducer& r) {
  const std::vector<std::string> outputs = r.current_built().outputs;
  if (outputs.size() < 2 || r.original().keep_outputs) return Status::ok();
  return ddmin_edits<std::string>(
      r, outputs, [&](Candidate& c, const std::string& item) { c.dropped_outputs.insert(item); },
      /*try_empty=*/false);
}

}  // namespace onnxdbg::reduce
