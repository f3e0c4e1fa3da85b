// Rule unnamed_value: a graph input, graph output or initializer with an empty name (ONNX IR
// "Names Within a Graph": every value a graph declares is named; "" only marks an omitted optional
// input or output of a node), and a node input left empty where the op's schema requires one
// (an output emptied by an exporter or an edit, whose reader was emptied with it). Nothing can
// feed or read such a value: runtimes refuse the model.
#include "lint/rule.h"

namespace onnxdbg::lint {

namespace {

// Node inputs that are "" where the schema (at the model's opset) has a single required one.
void required_inputs(RuleContext& ctx, const GraphInfo& g) {
  // The first node whose first output has an empty name (optional outputs come later): the
  // likely producer of what an emptied input read.
  int64_t emptied = -1;
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    if (emptied < 0 && n.output_size() > 0 && n.output(0).empty()) emptied = i;
    const onnx::OpSchema* schema = ctx.lookup(n).schema;
    if (!schema) continue;
    const auto& formal = schema->inputs();
    for (int k = 0; k < n.input_size() && static_cast<size_t>(k) < formal.size(); ++k) {
      if (!n.input(k).empty() ||
          formal[static_cast<size_t>(k)].GetOption() != onnx::OpSchema::Single)
        continue;
      std::string msg = "input " + std::to_string(k) + " ('" +
                        formal[static_cast<size_t>(k)].GetName() +
                        "') is required but its name is empty, so nothing feeds it";
      if (emptied >= 0 && emptied != i)
        msg += "; " + RuleContext::describe(g.node(emptied), emptied) +
               " has an output with an empty name too: name that output and read it here.";
      else
        msg += "; give it the name of the value it should read.";
      ctx.report(Severity::kError, g, i, msg);
    }
  }
}

}  // namespace

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
  required_inputs(ctx, g);
}

}  // namespace onnxdbg::lint
