// Rule unnamed_value: a graph input, graph output or initializer with an empty name (ONNX IR
// "Names Within a Graph": every value a graph declares is named; "" only marks an omitted optional
// input or output of a node). Nothing can feed or read such a value: runtimes refuse the model.
#include "lint/rule.h"

namespace onnxdbg::lint {

void lint_unnamed_value(RuleContext& ctx, const GraphInfo& g) {
  auto report = [&](const char* what, int index) {
    ctx.report(Severity::kError, g, -1,
               std::string(what) + " #" + std::to_string(index) +
                   " has an empty name; give it a name that the nodes reading it use.");
  };
  for (int i = 0; i < g.graph->input_size(); ++i)
    if (g.graph->input(i).name().empty()) report("graph input", i);
  for (int i = 0; i < g.graph->output_size(); ++i)
    if (g.graph->output(i).name().empty()) report("graph output", i);
  for (int i = 0; i < g.graph->initializer_size(); ++i)
    if (g.graph->initializer(i).name().empty()) report("initializer", i);
}

}  // namespace onnxdbg::lint
