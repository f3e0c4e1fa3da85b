// Rule op_not_in_opset: an op that exists in ONNX but not at the opset the model imports (too new,
// or already removed), and nodes in a domain the model does not import at all. Says which opset
// has the op and what fixes it (ONNX "Operator Versioning"): the opset whose form the node has, or
// a conversion that lint has tried on a copy of the model before it names the command.
#include <algorithm>
#include <map>

#include "lint/converter_ops.h"
#include "lint/fixes.h"
#include "lint/rule.h"
#include "model/graph.h"

namespace onnxdbg::lint {

namespace {

// What replaced a removed op (its schema's doc says so; the registry does not).
const char* replacement_of(const std::string& op) {
  static const std::map<std::string, const char*> kReplacements = {
      {"Upsample", "Resize"},
      {"Scatter", "ScatterElements"},
      {"TreeEnsembleClassifier", "TreeEnsemble"},
      {"TreeEnsembleRegressor", "TreeEnsemble"},
  };
  auto it = kReplacements.find(op);
  return it == kReplacements.end() ? nullptr : it->second;
}

// Default-domain nodes of every graph, other than `self`, that do not fit their op at the
// model's opset but fit a newer version: "#0 Clip 'clip'" -> that version.
std::vector<std::pair<std::string, int64_t>> newer_forms(RuleContext& ctx,
                                                         const onnx::NodeProto* self) {
  std::vector<std::pair<std::string, int64_t>> out;
  const int64_t opset = ctx.opset("");
  for (const auto& g : ctx.graphs())
    for (int64_t i = 0; i < g->node_count(); ++i) {
      const auto& n = g->node(i);
      if (&n == self || !canonical_domain(n.domain()).empty() || ctx.is_local_function(n)) continue;
      const SchemaLookup l = ctx.lookup(n);
      if (l.beyond_known || (l.schema && !l.schema->Deprecated() && fits_schema(n, *l.schema)))
        continue;
      if (const int64_t v = form_opset(n, "", opset)) out.emplace_back(node_label(n, i), v);
    }
  return out;
}

// Declaring default-domain opset `opset`, tried on a copy: the copy-pasteable set-opset command
// when the result lints clean ("" otherwise), and whether it was tried at all.
struct SetOpsetFix {
  std::string command;
  bool tried = false;
};
SetOpsetFix set_opset_fix(RuleContext& ctx, int64_t opset) {
  const std::string v = std::to_string(opset);
  const FixTrial& t =
      ctx.try_fix("set-opset " + v, [opset](onnx::ModelProto& m) { return set_opset(m, opset); });
  return {t.works() ? ctx.surgeon_command("set-opset", "--opset " + v, "opset" + v) : "", t.tried};
}

// The fix for a default-domain op the model's opset does not have yet. No conversion can add it
// (ONNX's version converter has no adapter into an op's first version), so the fix is declaring
// the opset the model was written for: the one whose form this node and the others have.
std::string fix_for_missing(RuleContext& ctx, const onnx::NodeProto& n, int64_t opset) {
  const char* kNoConversion =
      " (onnxdbg surgeon convert-opset cannot convert an op the model's own opset lacks).";
  const int64_t form = form_opset(n, "", opset);
  if (form == 0)
    return ": if the model was written for a newer opset, set its ai.onnx version in opset_import "
           "to that one (onnxdbg surgeon set-opset); otherwise replace the node" +
           std::string(kNoConversion);
  std::string msg =
      ", and this node has the form of its opset-" + std::to_string(form) + " version";
  int64_t target = form;
  const auto others = newer_forms(ctx, &n);
  if (!others.empty()) {
    std::string names;
    for (size_t k = 0; k < others.size() && k < 3; ++k) names += (k ? ", " : "") + others[k].first;
    for (const auto& o : others) target = std::max(target, o.second);
    if (others.size() > 3) names += " and " + std::to_string(others.size() - 3) + " more";
    msg += "; " + names + (others.size() == 1 ? " also has a form" : " also have forms") +
           " newer than opset " + std::to_string(opset);
  }
  const std::string t = std::to_string(target);
  // Declaring that opset is the fix: named as a command when a trial on a copy lints clean.
  const SetOpsetFix fix = set_opset_fix(ctx, target);
  if (!fix.command.empty())
    return msg + ": if the model was written for opset " + t + ", `" + fix.command +
           "` declares it without changing a node" + kNoConversion;
  return msg + ": if the model was written for opset " + t +
         ", set its ai.onnx version in opset_import to " + t +
         (fix.tried ? " (with onnxdbg surgeon set-opset the result would still have lint "
                      "errors: fix those first)"
                    : " (onnxdbg surgeon set-opset does)") +
         kNoConversion;
}

// The fix for a removed (deprecated) op of the default domain. A later version of the op (as
// GroupNormalization has at 21) may be reached with convert-opset: named when a trial on a copy
// works. Else its replacement, or declaring the older opset the model may have been written for.
std::string fix_for_removed(RuleContext& ctx, const onnx::NodeProto& n, const OpHistory& h,
                            int removed_at, int last_before) {
  int again = 0;  // the first version after removal that is not deprecated
  for (size_t k = 0; k < h.since_versions.size() && !again; ++k)
    if (!h.deprecated[k] && h.since_versions[k] > removed_at) again = h.since_versions[k];
  if (again > 0) {
    // ONNX's converter runs shape inference in this process; lint's own run of it is forked, and
    // where that crashed or failed outright the converter is not tried (the fix stays in words).
    static const FixTrial kNotTried;
    const FixTrial& t =
        !ctx.inference().other_error.empty()
            ? kNotTried
            : ctx.try_fix("convert-opset " + std::to_string(again),
                          [again](onnx::ModelProto& m) { return convert_opset(m, again); });
    const std::string v = std::to_string(again);
    if (t.works())
      return ": `" + ctx.surgeon_command("convert-opset", "--opset " + v, "opset" + v) +
             "` converts the model to opset " + v + ", which defines " + n.op_type() + " again.";
    std::string why = !t.tried                ? ""
                      : !t.edit_error.empty() ? ": " + t.edit_error
                                              : ": the result would still have lint errors";
    return ": opset " + v + " defines " + n.op_type() + " again; convert the model to it" +
           (t.tried ? " (onnxdbg surgeon convert-opset cannot on this model" + why + ")" : "") +
           ".";
  }
  const char* repl = replacement_of(n.op_type());
  std::string msg = repl ? std::string(": replace it with ") + repl : ": use its replacement";
  if (last_before <= 0) return msg + ".";
  // Or declare the last opset that has it: named as a command when a trial lints clean.
  const int64_t older = removed_at - 1;
  const std::string o = std::to_string(older);
  const SetOpsetFix fix = set_opset_fix(ctx, older);
  if (!fix.command.empty())
    return msg + ", or, if the model was written for opset " + o + " or older, `" + fix.command +
           "` declares opset " + o +
           " without changing a node (onnxdbg surgeon convert-opset "
           "cannot convert a removed op).";
  return msg + ", or, if the model was written for opset " + o +
         " or older, set its ai.onnx version in opset_import to that opset (onnxdbg surgeon "
         "convert-opset cannot convert a removed op).";
}

}  // namespace

void lint_op_not_in_opset(RuleContext& ctx, const GraphInfo& g) {
  // Domains used but not imported: one finding per domain and graph, on its first node.
  std::map<std::string, std::pair<int64_t, int64_t>> unimported;  // domain -> (first node, count)
  const auto& histories = op_histories();
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    if (ctx.is_local_function(n)) continue;
    const std::string domain = canonical_domain(n.domain());
    const SchemaLookup l = ctx.lookup(n);
    if (!l.domain_imported) {
      auto [it, inserted] = unimported.emplace(domain, std::make_pair(i, int64_t{0}));
      ++it->second.second;
      continue;
    }
    if (!l.known_domain) continue;
    auto dit = histories.find(domain);
    if (dit == histories.end()) continue;
    auto oit = dit->second.find(n.op_type());
    if (oit == dit->second.end()) continue;  // unknown_op's business
    const OpHistory& h = oit->second;
    const std::string at = "opset " + std::to_string(l.opset) + " of " + domain_display(domain);
    if (!l.schema) {
      const int since = h.since_versions.front();
      std::string msg = n.op_type() + " does not exist at " + at + "; it was introduced in opset " +
                        std::to_string(since);
      if (domain.empty() && made_by_known_converter(ctx.proto()))
        // A converter's output: its nodes have the forms of the opset it targeted, so the fix
        // is converting again at the opset that has this op (converter_ops.h).
        msg += ": " + reconvert_hint(ctx.proto(), since) + ".";
      else if (domain.empty())
        msg += fix_for_missing(ctx, n, l.opset);
      else
        msg += ": import " + domain_display(domain) + " version " + std::to_string(since) + ".";
      ctx.report(Severity::kError, g, i, msg);
      continue;
    }
    if (l.schema->Deprecated()) {
      // The newest non-deprecated version before the one in force.
      int last = 0;
      for (size_t k = 0; k < h.since_versions.size(); ++k)
        if (!h.deprecated[k] && h.since_versions[k] < l.schema->since_version())
          last = h.since_versions[k];
      std::string msg =
          n.op_type() + " was removed in opset " + std::to_string(l.schema->since_version()) +
          " of " + domain_display(domain) + " and the model imports " + std::to_string(l.opset);
      if (domain.empty())
        msg += fix_for_removed(ctx, n, h, l.schema->since_version(), last);
      else if (const char* repl = replacement_of(n.op_type()))
        msg += ": replace it with " + std::string(repl) + ".";
      else
        msg += ".";
      ctx.report(l.beyond_known ? Severity::kWarning : Severity::kError, g, i, msg);
    }
  }
  for (const auto& [domain, first_count] : unimported) {
    const auto [first, count] = first_count;
    ctx.report(Severity::kError, g, first,
               std::to_string(count) + " node" + (count > 1 ? "s use" : " uses") + " domain '" +
                   domain_display(domain) +
                   "', which the model does not import (add it to opset_import).");
  }
}

}  // namespace onnxdbg::lint
