// Rule onnx_checker: the ONNX checker (onnx::checker, as onnx.checker.check_model does) over the
// whole model. It stops at its first error, which becomes one finding; the other rules find the
// rest. Run with the model's folder so external data is checked where it really lives.
#include <map>

#include "core/onnx.h"
#include "lint/rule.h"
#include "model/model.h"
#include "onnx/checker.h"

namespace onnxdbg::lint {

namespace {

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  std::string out;
  for (char c : s)
    if (!(c == ' ' && !out.empty() && out.back() == ' ')) out += c;
  while (!out.empty() && (out.back() == ' ' || out.back() == '.')) out.pop_back();
  return out;
}

// The checker names the node as "Name: X OpType: Y" (in its context) or "node: name: X OpType: Y".
void locate(const RuleContext& ctx, const std::string& what, const GraphInfo*& g, int64_t& node) {
  size_t n = what.find("Name: ");
  if (n == std::string::npos) n = what.find("name: ");
  const size_t o = n == std::string::npos ? n : what.find(" OpType: ", n);
  if (o == std::string::npos) return;
  const std::string name = what.substr(n + 6, o - n - 6);
  const size_t op_start = o + 9;
  size_t op_end = op_start;
  while (op_end < what.size() && what[op_end] != ' ' && what[op_end] != '\n') ++op_end;
  const std::string op = what.substr(op_start, op_end - op_start);
  if (name.empty()) return;
  for (const auto& gi : ctx.graphs())
    for (int64_t i = 0; i < gi->node_count(); ++i)
      if (gi->node(i).name() == name && gi->node(i).op_type() == op) {
        g = gi.get();
        node = i;
        return;
      }
}

}  // namespace

void lint_onnx_checker(RuleContext& ctx, const GraphInfo& main) {
  const auto& m = ctx.proto();
  // Newer models are checked against the newest schemas this ONNX knows (clamped opsets and IR);
  // what still fails may be a feature it does not know, so it is only a warning.
  const Severity sev = ctx.newer_than_known() ? Severity::kWarning : Severity::kError;
  const std::string caveat =
      ctx.newer_than_known()
          ? " (the model is newer than this ONNX build; this may be a false alarm)"
          : "";

  onnx::checker::CheckerContext c;
  c.set_ir_version(static_cast<int>(std::min<int64_t>(m.ir_version(), max_known_ir_version())));
  c.set_model_dir(ctx.model().base_dir.string());
  std::unordered_map<std::string, int> imports;
  for (const auto& op : m.opset_import()) {
    const int64_t known = newest_known_opset(op.domain());
    imports[op.domain()] =
        static_cast<int>(known > 0 ? std::min<int64_t>(op.version(), known) : op.version());
  }
  if (m.ir_version() >= 3 && imports.empty()) {
    ctx.report(sev, main, -1,
               "the model imports no opset; IR version 3 and later require opset_import.");
    return;
  }
  if (m.ir_version() < 3) {
    if (!imports.empty())
      ctx.report(sev, main, -1,
                 "the model has opset_import, which IR versions before 3 do not allow.");
    else
      imports[""] = 1;
  }
  std::map<std::string, int> keys;
  for (const auto& p : m.metadata_props())
    if (++keys[p.key()] == 2)
      ctx.report(sev, main, -1, "metadata key '" + p.key() + "' appears more than once.");
  c.set_opset_imports(imports);

  try {
    onnx::checker::LexicalScopeContext lex;
    onnx::checker::check_graph(m.graph(), c, lex);
    if (c.get_ir_version() >= 8) onnx::checker::check_model_local_functions(m, c, lex);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const size_t ctx_pos = what.find("==> Context:");
    const GraphInfo* g = &main;
    int64_t node = -1;
    locate(ctx, ctx_pos != std::string::npos ? what.substr(ctx_pos) : what, g, node);
    ctx.report(sev, *g, node, "ONNX checker: " + one_line(what.substr(0, ctx_pos)) + caveat + ".");
  }
}

}  // namespace onnxdbg::lint
