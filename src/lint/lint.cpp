// The lint driver: builds the scope-aware view of every graph once, runs each rule of
// rules/rules.def over the model or over every graph, and sorts the findings by graph and node.
#include "lint/lint.h"

#include <algorithm>
#include <unordered_set>

#include "lint/rule.h"
#include "model/graph.h"

namespace onnxdbg::lint {

#define ODB_LINT_RULE(name, scope, kind) void lint_##name(RuleContext&, const GraphInfo&);
#include "lint/rules/rules.def"
#undef ODB_LINT_RULE

namespace {

struct RuleEntry {
  const char* name;
  RuleScope scope;
  RuleFn fn;
  bool structural;
};
constexpr bool kStructural = true, kAdvisory = false;

const std::vector<RuleEntry>& registry() {
  static const std::vector<RuleEntry> rules = {
#define ODB_LINT_RULE(name, scope, kind) {#name, RuleScope::scope, &lint_##name, kind},
#include "lint/rules/rules.def"
#undef ODB_LINT_RULE
  };
  return rules;
}

// The GraphInfo of the main graph and (preorder, as walk_graphs gives them) of every subgraph.
std::vector<std::unique_ptr<GraphInfo>> build_graphs(const onnx::GraphProto& main) {
  std::vector<std::unique_ptr<GraphInfo>> out;
  walk_graphs(main, [&](const GraphVisit& v) {
    auto info = std::make_unique<GraphInfo>();
    const onnx::GraphProto& g = *v.graph;
    info->graph = &g;
    info->path = v.path;
    info->index = v.index;
    info->parent = v.parent >= 0 ? out[static_cast<size_t>(v.parent)].get() : nullptr;
    info->parent_node = v.node;
    for (const auto& vi : g.input()) info->producer.emplace(vi.name(), kGraphInput);
    for (const auto& t : g.initializer()) info->producer.emplace(t.name(), kInitializer);
    for (const auto& t : g.sparse_initializer())
      info->producer.emplace(t.values().name(), kInitializer);
    for (const auto& [name, node] : producers(g)) info->producer.emplace(name, node);
    info->implicit_inputs.reserve(static_cast<size_t>(g.node_size()));
    for (const auto& n : g.node()) info->implicit_inputs.push_back(implicit_inputs(n));
    info->free_names = free_names(g);
    out.push_back(std::move(info));
  });
  return out;
}

}  // namespace

std::string_view severity_name(Severity s) { return enum_name(kSeverityNames, s); }

FindingCounts count_findings(const std::vector<Finding>& findings) {
  FindingCounts c;
  for (const auto& f : findings) {
    if (f.severity == Severity::kError)
      ++c.error;
    else if (f.severity == Severity::kWarning)
      ++c.warning;
    else
      ++c.info;
  }
  return c;
}

std::vector<std::string> rule_names() {
  std::vector<std::string> out;
  for (const auto& r : registry()) out.emplace_back(r.name);
  return out;
}

std::vector<std::string> structural_rule_names() {
  std::vector<std::string> out;
  for (const auto& r : registry())
    if (r.structural) out.emplace_back(r.name);
  return out;
}

namespace {

Expected<std::vector<Finding>> run_rules(const LoadedModel& model, const LintOptions& options,
                                         bool trials) {
  for (const auto& name : options.disabled_rules) {
    const auto& rs = registry();
    if (std::none_of(rs.begin(), rs.end(), [&](const RuleEntry& r) { return name == r.name; })) {
      std::string known;
      for (const auto& r : rs) known += (known.empty() ? "" : ", ") + std::string(r.name);
      return invalid_argument("unknown lint rule '" + name + "' (rules: " + known + ")");
    }
  }
  RuleContext ctx(model, build_graphs(model.proto.graph()), trials);

  for (const auto& rule : registry()) {
    if (options.disabled_rules.count(rule.name)) continue;
    ctx.set_rule(rule.name);
    try {
      if (rule.scope == RuleScope::kModel) {
        rule.fn(ctx, ctx.main_graph());
      } else {
        for (const auto& g : ctx.graphs()) rule.fn(ctx, *g);
      }
    } catch (const std::exception& e) {
      // A rule tripping over a malformed model must not hide the other rules' findings.
      ctx.report(Severity::kWarning, ctx.main_graph(), -1,
                 std::string("this rule could not finish: ") + e.what());
    }
  }

  auto keyed = ctx.take_findings();
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if (a.second.node_index != b.second.node_index)
      return a.second.node_index < b.second.node_index;
    return a.second.severity < b.second.severity;  // errors first, then rule order
  });
  std::vector<Finding> out;
  out.reserve(keyed.size());
  for (auto& [g, f] : keyed) out.push_back(std::move(f));
  return out;
}

}  // namespace

Expected<std::vector<Finding>> lint_model(const LoadedModel& model, const LintOptions& options) {
  return run_rules(model, options, /*trials=*/true);
}

Expected<std::vector<Finding>> lint_without_trials(const LoadedModel& model) {
  return run_rules(model, {}, /*trials=*/false);
}

}  // namespace onnxdbg::lint
