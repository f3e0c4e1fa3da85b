// Rule function_calls: calls between the model's local functions (ONNX IR "Functions"). A node
// of a domain that holds local functions but naming none of them calls a function that does not
// exist (onnxdbg cannot tell a custom op from it in other domains); a function that calls itself,
// directly or through others, has no expansion: every runtime refuses it (ONNX Runtime's inliner
// loops or gives up, the reference stops at 16 levels). Both are errors, so `run` stops first.
#include <algorithm>
#include <map>
#include <set>

#include "lint/rule.h"

namespace onnxdbg::lint {

namespace {

using FunctionKey = std::string;  // "domain:name", as RuleContext::is_local_function

FunctionKey key_of(const std::string& domain, const std::string& name) {
  return domain + ":" + name;
}

// Calls `fn(node)` for every node of `g` and of the subgraphs in its nodes' attributes.
template <typename Fn>
void each_node(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, Fn&& fn) {
  for (const auto& n : nodes) {
    fn(n);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) each_node(a.g().node(), fn);
      for (const auto& g : a.graphs()) each_node(g.node(), fn);
    }
  }
}

// "'f'" or "'f' (domain 'local')" for messages.
std::string function_name(const onnx::FunctionProto& f) {
  return "'" + f.name() + "'" + (f.domain().empty() ? "" : " (domain '" + f.domain() + "')");
}

class CallGraph {
 public:
  explicit CallGraph(const onnx::ModelProto& model) {
    for (const auto& f : model.functions()) {
      functions_.emplace(key_of(f.domain(), f.name()), &f);
      local_domains_.insert(canonical_domain(f.domain()));
    }
    for (const auto& f : model.functions()) {
      auto& callees = calls_[key_of(f.domain(), f.name())];
      each_node(f.node(), [&](const onnx::NodeProto& n) {
        if (const FunctionKey k = key_of(n.domain(), n.op_type()); functions_.count(k))
          callees.insert(k);
      });
    }
  }

  /// A call to a function that does not exist: a domain of local functions, no such function,
  /// and not an ONNX domain (whose ops unknown_op checks).
  bool undefined(const onnx::NodeProto& n) const {
    const std::string domain = canonical_domain(n.domain());
    return local_domains_.count(domain) && !functions_.count(key_of(n.domain(), n.op_type())) &&
           newest_known_opset(domain) <= 0;
  }
  std::string local_names(const std::string& domain) const {
    std::string s;
    for (const auto& [k, f] : functions_)
      if (canonical_domain(f->domain()) == canonical_domain(domain))
        s += (s.empty() ? "'" : ", '") + f->name() + "'";
    return s;
  }
  const std::map<FunctionKey, const onnx::FunctionProto*>& functions() const { return functions_; }

  /// Each cycle of calls once, as the functions along it from its smallest key.
  std::vector<std::vector<FunctionKey>> cycles() const {
    std::set<std::vector<FunctionKey>> found;
    std::map<FunctionKey, int> state;  // 0 unseen, 1 on the path, 2 done
    std::vector<FunctionKey> path;
    for (const auto& [k, f] : functions_) visit(k, state, path, found);
    return {found.begin(), found.end()};
  }

 private:
  void visit(const FunctionKey& k, std::map<FunctionKey, int>& state,
             std::vector<FunctionKey>& path, std::set<std::vector<FunctionKey>>& found) const {
    if (state[k] == 2) return;
    state[k] = 1;
    path.push_back(k);
    for (const FunctionKey& c : calls_.at(k)) {
      if (state[c] == 1) {
        std::vector<FunctionKey> cycle(std::find(path.begin(), path.end(), c), path.end());
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        found.insert(cycle);
      } else {
        visit(c, state, path, found);
      }
    }
    path.pop_back();
    state[k] = 2;
  }

  std::map<FunctionKey, const onnx::FunctionProto*> functions_;
  std::set<std::string> local_domains_;
  std::map<FunctionKey, std::set<FunctionKey>> calls_;
};

}  // namespace

void lint_function_calls(RuleContext& ctx, const GraphInfo& main) {
  if (ctx.proto().functions_size() == 0) return;
  const CallGraph calls(ctx.proto());
  auto undefined_message = [&](const onnx::NodeProto& n) {
    return "calls '" + n.op_type() + "' of domain '" + n.domain() +
           "', which is not a function of this model (its functions there: " +
           calls.local_names(n.domain()) + "); define it or call one of those.";
  };
  for (const auto& g : ctx.graphs())
    for (int64_t i = 0; i < g->node_count(); ++i)
      if (calls.undefined(g->node(i)))
        ctx.report(Severity::kError, *g, i, "the node " + undefined_message(g->node(i)));
  for (const auto& f : ctx.proto().functions())
    each_node(f.node(), [&](const onnx::NodeProto& n) {
      if (calls.undefined(n))
        ctx.report(Severity::kError, main, -1,
                   "function " + function_name(f) + " " + undefined_message(n));
    });
  for (const auto& cycle : calls.cycles()) {
    const onnx::FunctionProto& first = *calls.functions().at(cycle.front());
    std::string msg = "function " + function_name(first);
    if (cycle.size() == 1) {
      msg += " calls itself";
    } else {
      msg += " calls itself through ";
      for (size_t k = 1; k < cycle.size(); ++k)
        msg += (k > 1 ? " -> '" : "'") + calls.functions().at(cycle[k])->name() + "'";
      msg += " -> '" + first.name() + "'";
    }
    ctx.report(Severity::kError, main, -1,
               msg +
                   "; a function's body cannot call it again, directly or through others "
                   "(ONNX IR \"Functions\"), so no runtime can expand it.");
  }
}

}  // namespace onnxdbg::lint
