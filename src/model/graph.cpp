// The graph toolkit: node labels, subgraph paths, name sets, free names, producers and
// consumers, and the stable topological order (see graph.h).
#include "model/graph.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <queue>

namespace onnxdbg {

// --- naming nodes ---------------------------------------------------------------------------

std::string qualified_op_type(const onnx::NodeProto& node) {
  const std::string& d = node.domain();
  if (d.empty() || d == "ai.onnx") return node.op_type();
  return d + "." + node.op_type();
}

std::string node_label(std::string_view name, std::string_view op_type, int64_t index) {
  std::string s = "#" + std::to_string(index) + " ";
  s += op_type;
  if (!name.empty()) {
    s += " '";
    s += name;
    s += "'";
  }
  return s;
}

std::string node_label(const onnx::NodeProto& node, int64_t index) {
  return node_label(node.name(), qualified_op_type(node), index);
}

std::optional<NodeLabelParts> parse_node_label(std::string_view label) {
  if (label.size() < 2 || label[0] != '#') return std::nullopt;
  NodeLabelParts p;
  const char* begin = label.data() + 1;
  const char* end = label.data() + label.size();
  auto [ptr, ec] = std::from_chars(begin, end, p.index);
  if (ec != std::errc() || ptr == begin || p.index < 0) return std::nullopt;
  std::string_view rest(ptr, static_cast<size_t>(end - ptr));
  if (rest.empty()) return p;
  if (rest[0] != ' ' || rest.size() < 2) return std::nullopt;
  rest.remove_prefix(1);
  const size_t space = rest.find(' ');
  p.op_type = std::string(rest.substr(0, space));
  if (p.op_type.empty()) return std::nullopt;
  if (space == std::string_view::npos) return p;
  rest.remove_prefix(space + 1);
  if (rest.size() < 2 || rest.front() != '\'' || rest.back() != '\'') return std::nullopt;
  p.name = std::string(rest.substr(1, rest.size() - 2));
  p.has_name = true;
  return p;
}

// --- subgraphs ------------------------------------------------------------------------------

bool has_subgraph(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

std::string subgraph_path(std::string_view parent_path, std::string_view owner_name,
                          std::string_view owner_op_type, int64_t owner_index,
                          std::string_view attribute) {
  std::string s(parent_path);
  s += "/";
  if (owner_name.empty()) {
    s += owner_op_type;
    s += "#" + std::to_string(owner_index);
  } else {
    s += owner_name;
  }
  s += ":";
  s += attribute;
  return s;
}

std::string subgraph_path(std::string_view parent_path, const onnx::NodeProto& owner,
                          int64_t owner_index, std::string_view attribute) {
  return subgraph_path(parent_path, owner.name(), owner.op_type(), owner_index, attribute);
}

// --- names ----------------------------------------------------------------------------------

NameSet graph_input_names(const onnx::GraphProto& graph) {
  NameSet s;
  for (const auto& vi : graph.input()) s.insert(vi.name());
  return s;
}

NameSet initializer_names(const onnx::GraphProto& graph) {
  NameSet s;
  for (const auto& t : graph.initializer()) s.insert(t.name());
  for (const auto& t : graph.sparse_initializer()) s.insert(t.values().name());
  return s;
}

NameSet graph_output_names(const onnx::GraphProto& graph) {
  NameSet s;
  for (const auto& vi : graph.output()) s.insert(vi.name());
  return s;
}

NameSet defined_names(const onnx::GraphProto& graph) {
  NameSet s = graph_input_names(graph);
  for (const auto& t : graph.initializer()) s.insert(t.name());
  for (const auto& t : graph.sparse_initializer()) s.insert(t.values().name());
  for (const auto& n : graph.node())
    for (const auto& o : n.output())
      if (!o.empty()) s.insert(o);
  return s;
}

std::vector<std::string> free_names(const onnx::GraphProto& graph) {
  const NameSet defined = defined_names(graph);
  std::vector<std::string> out;
  NameSet seen;
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) out.push_back(name);
  };
  for (const auto& n : graph.node())
    for (const auto& r : node_reads(n)) use(r);
  for (const auto& o : graph.output()) use(o.name());
  return out;
}

std::vector<std::string> implicit_inputs(const onnx::NodeProto& node) {
  std::vector<std::string> out;
  if (!has_subgraph(node)) return out;
  NameSet seen;
  for_each_subgraph(node, [&](const onnx::GraphProto& sub, const std::string&) {
    for (auto& name : free_names(sub))
      if (seen.insert(name).second) out.push_back(std::move(name));
  });
  return out;
}

std::vector<std::string> node_reads(const onnx::NodeProto& node) {
  std::vector<std::string> out;
  NameSet seen;
  for (const auto& i : node.input())
    if (!i.empty() && seen.insert(i).second) out.push_back(i);
  for (auto& name : implicit_inputs(node))
    if (seen.insert(name).second) out.push_back(std::move(name));
  return out;
}

std::unordered_map<std::string, int> producers(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, int> p;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto& o : graph.node(i).output())
      if (!o.empty()) p.emplace(o, i);
  return p;
}

std::unordered_map<std::string, std::vector<int>> consumers(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, std::vector<int>> c;
  for (int i = 0; i < graph.node_size(); ++i)
    for (auto& r : node_reads(graph.node(i))) c[std::move(r)].push_back(i);
  return c;
}

// --- topological order ----------------------------------------------------------------------

namespace {

// One cycle among the nodes Kahn could not place, producer first: "A -> B -> A".
std::string find_cycle(const onnx::GraphProto& g, const std::vector<std::vector<int>>& deps,
                       const std::vector<int>& left) {
  std::vector<int> state(static_cast<size_t>(g.node_size()), 0);  // 0 new, 1 on stack, 2 done
  std::vector<int> stack;
  std::string out;
  std::function<bool(int)> dfs = [&](int v) {
    state[static_cast<size_t>(v)] = 1;
    stack.push_back(v);
    for (int d : deps[static_cast<size_t>(v)]) {
      if (state[static_cast<size_t>(d)] == 1) {
        // The stack runs reader to producer; reversed it is the data flow.
        auto it = std::find(stack.begin(), stack.end(), d);
        std::vector<int> cyc(it, stack.end());
        std::reverse(cyc.begin(), cyc.end());
        for (int c : cyc) out += node_label(g.node(c), c) + " -> ";
        out += node_label(g.node(cyc.front()), cyc.front());
        return true;
      }
      if (state[static_cast<size_t>(d)] == 0 && dfs(d)) return true;
    }
    stack.pop_back();
    state[static_cast<size_t>(v)] = 2;
    return false;
  };
  for (int v : left)
    if (state[static_cast<size_t>(v)] == 0 && dfs(v)) return out;
  return "(cycle not located)";
}

}  // namespace

Expected<std::vector<int>> topological_order(const onnx::GraphProto& graph, const NameSet& outer) {
  const int n = graph.node_size();
  const auto prod = producers(graph);
  NameSet given = graph_input_names(graph);
  for (const auto& name : initializer_names(graph)) given.insert(name);
  std::vector<std::vector<int>> deps(static_cast<size_t>(n)), users(static_cast<size_t>(n));
  std::vector<int> indegree(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    std::unordered_set<int> seen;
    for (const auto& r : node_reads(graph.node(i))) {
      auto it = prod.find(r);
      if (it == prod.end()) {
        if (given.count(r) || outer.count(r)) continue;
        return model_error(node_label(graph.node(i), i) + " reads '" + r +
                           "', which no node, graph input, initializer or enclosing graph "
                           "defines");
      }
      if (!seen.insert(it->second).second) continue;
      deps[static_cast<size_t>(i)].push_back(it->second);
      users[static_cast<size_t>(it->second)].push_back(i);
      ++indegree[static_cast<size_t>(i)];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (indegree[static_cast<size_t>(i)] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  while (!ready.empty()) {
    const int v = ready.top();
    ready.pop();
    order.push_back(v);
    for (int u : users[static_cast<size_t>(v)])
      if (--indegree[static_cast<size_t>(u)] == 0) ready.push(u);
  }
  if (static_cast<int>(order.size()) != n) {
    std::vector<int> left;
    for (int i = 0; i < n; ++i)
      if (indegree[static_cast<size_t>(i)] > 0) left.push_back(i);
    return model_error("the nodes form a cycle, so no order exists: " +
                       find_cycle(graph, deps, left));
  }
  return order;
}

void make_cast_node(onnx::NodeProto& node, const std::string& name, const std::string& input,
                    const std::string& output, int32_t to) {
  node.Clear();
  node.set_op_type("Cast");
  node.set_name(name);
  node.add_input(input);
  node.add_output(output);
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(to);
}

}  // namespace onnxdbg
