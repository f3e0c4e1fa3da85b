// Text and JSON renderings of a ModelSummary. Text columns are sized to their content with a
// cap, so one very long tensor name pushes only its own row past the column instead of the table.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inspect/inspect.h"

namespace onnxdbg {

namespace {

std::string human_bytes(uint64_t b) {
  if (b < 1024) return fmt::format("{} B", b);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string with_commas(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + (v[i].empty() ? "''" : v[i]);
  return s;
}

// Joins items with ", ", starting a new line indented by `indent` before passing `width` columns.
std::string wrap(const std::vector<std::string>& items, size_t indent, size_t width) {
  std::string out;
  size_t col = indent;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string piece = items[i] + (i + 1 < items.size() ? "," : "");
    if (i && col + 1 + piece.size() > width) {
      out += "\n" + std::string(indent, ' ');
      col = indent;
    } else if (i) {
      out += ' ';
      ++col;
    }
    out += piece;
    col += piece.size();
  }
  return out;
}

std::string dims_text(const ValueSummary& v) {
  if (!v.has_shape) return "(shape unknown)";
  return "[" + join(v.dims, ", ") + "]";
}

std::string pad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}
std::string rpad(const std::string& s, size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

// Rows of cells as aligned columns: widths are the longest cell, capped at caps[c] (0: no cap);
// right_align[c] right-aligns numbers. The last column is never padded.
std::string table(const std::vector<std::vector<std::string>>& rows,
                  const std::vector<size_t>& caps, const std::vector<bool>& right_align,
                  const std::string& indent) {
  std::vector<size_t> w(caps.size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < w.size(); ++c)
      w[c] = std::max(w[c], caps[c] ? std::min(r[c].size(), caps[c]) : r[c].size());
  std::string out;
  for (const auto& r : rows) {
    std::string line = indent;
    for (size_t c = 0; c < r.size(); ++c) {
      const bool last = c + 1 == r.size();
      if (c) line += "  ";
      if (last && !right_align[c])
        line += r[c];
      else
        line += right_align[c] ? rpad(r[c], w[c]) : pad(r[c], w[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string values_table(const std::vector<ValueSummary>& vs) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(vs.size());
  for (const auto& v : vs) rows.push_back({v.name, v.type, dims_text(v)});
  return table(rows, {40, 24, 0}, {false, false, false}, "  ");
}

std::string histogram_text(const std::vector<OpCount>& h) {
  // Cells "Conv  53" laid out row-major in as many columns as fit in 100.
  size_t name_w = 0, count_w = 0;
  for (const auto& o : h) {
    name_w = std::max(name_w, o.op_type.size());
    count_w = std::max(count_w, std::to_string(o.count).size());
  }
  const size_t cell = name_w + 1 + count_w;
  const size_t cols = std::max<size_t>(1, (98 + 4) / (cell + 4));
  std::string out;
  for (size_t i = 0; i < h.size(); ++i) {
    if (i % cols == 0) out += "  ";
    out += pad(h[i].op_type, name_w) + " " + rpad(std::to_string(h[i].count), count_w);
    if (i % cols == cols - 1 || i + 1 == h.size())
      out += "\n";
    else
      out += "    ";
  }
  return out;
}

void render_graph(const GraphSummary& g, bool attrs, const std::string& indent, std::string& out) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"#", "name", "op", "inputs -> outputs"});
  for (const auto& n : g.nodes) {
    const std::string op =
        n.domain.empty() || n.domain == "ai.onnx" ? n.op_type : n.domain + "." + n.op_type;
    rows.push_back(
        {std::to_string(n.index), n.name.empty() ? "-" : n.name, op,
         (n.inputs.empty() ? "" : join(n.inputs, ", ") + " ") + "-> " + join(n.outputs, ", ")});
  }
  const std::vector<size_t> caps = {0, 28, 20, 0};
  // Format the whole table for alignment, then interleave attribute and subgraph lines.
  const std::string formatted = table(rows, caps, {true, false, false, false}, indent);
  std::vector<std::string> lines;
  for (size_t a = 0, b; (b = formatted.find('\n', a)) != std::string::npos; a = b + 1)
    lines.push_back(formatted.substr(a, b - a));
  const size_t index_w = std::to_string(g.nodes.empty() ? 0 : g.nodes.back().index).size();
  const std::string sub_indent = indent + std::string(index_w + 2, ' ');
  out += lines[0] + "\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    out += lines[i + 1] + "\n";
    if (attrs) {
      size_t aw = 0;
      for (const auto& a : n.attributes) aw = std::max(aw, a.name.size());
      for (const auto& a : n.attributes)
        out += sub_indent + "  " + pad(a.name, aw) + " = " + a.value + "\n";
    }
    for (const auto& sg : n.subgraphs) {
      const GraphSummary& sub = sg.graph.front();
      out += sub_indent + fmt::format("{}: graph{} ({} node{})\n", sg.attribute,
                                      sub.name.empty() ? "" : " '" + sub.name + "'", sub.node_count,
                                      sub.node_count == 1 ? "" : "s");
      if (!sub.nodes.empty()) render_graph(sub, attrs, sub_indent + "  ", out);
    }
  }
}

std::string stat(const WeightSummary& w, double v) {
  return w.has_stats ? fmt::format("{:.3g}", v) : "-";
}

// One table per source. Names longer than kNameCap go on their own line with the numbers below,
// which keeps the numeric columns aligned and the table within ~100 columns.
std::string weights_text(const std::vector<WeightSummary>& ws, const std::string& source) {
  constexpr size_t kNameCap = 24;
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"name", "dtype", "shape", "bytes", "min", "max", "mean", "std", "NaN", "Inf"});
  for (const auto& w : ws) {
    if (w.source != source) continue;
    std::string shape = "[";
    for (size_t i = 0; i < w.shape.size(); ++i)
      shape += (i ? "," : "") + std::to_string(w.shape[i]);
    rows.push_back({w.name, std::string(dtype_name(w.dtype)), shape + "]", human_bytes(w.bytes),
                    stat(w, w.min), stat(w, w.max), stat(w, w.mean), stat(w, w.std),
                    std::to_string(w.nan_count), std::to_string(w.inf_count)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c)
      if (c != 0 || r[c].size() <= kNameCap) width[c] = std::max(width[c], r[c].size());
  std::string out, errors;
  for (const auto& r : rows) {
    std::string line = "  ";
    if (r[0].size() > width[0]) {
      out += "  " + r[0] + "\n";
      line += std::string(width[0], ' ');
    } else {
      line += pad(r[0], width[0]);
    }
    line += "  " + pad(r[1], width[1]) + "  " + pad(r[2], width[2]);
    for (size_t c = 3; c < r.size(); ++c) line += (c == 3 ? "  " : " ") + rpad(r[c], width[c]);
    out += line + "\n";
  }
  for (const auto& w : ws)
    if (w.source == source && !w.error.empty()) errors += "  " + w.name + ": " + w.error + "\n";
  if (!errors.empty()) out += "Could not be read:\n" + errors;
  return out;
}

}  // namespace

std::string render_summary_text(const ModelSummary& s) {
  std::string out;
  auto field = [&](const std::string& k, const std::string& v) { out += pad(k, 14) + v + "\n"; };
  field("Model", s.file_name + "  (" + (s.file_size < 1024 ? "" : human_bytes(s.file_size) + ", ") +
                     with_commas(s.file_size) + " bytes)");
  field("IR version", std::to_string(s.ir_version));
  std::string producer = s.producer_name.empty() ? "(not set)" : s.producer_name;
  if (!s.producer_version.empty()) producer += " " + s.producer_version;
  field("Producer", producer);
  if (!s.domain.empty() || s.model_version)
    field("Model domain", (s.domain.empty() ? "(none)" : s.domain) + ", version " +
                              std::to_string(s.model_version));
  std::vector<std::string> opsets;
  for (const auto& [d, v] : s.opset_imports) opsets.push_back(d + " " + std::to_string(v));
  field("Opsets", opsets.empty() ? "(none)" : wrap(opsets, 14, 100));
  for (const auto& w : s.warnings) out += "Warning: " + w + "\n";
  out += fmt::format("Inputs ({})\n", s.inputs.size()) + values_table(s.inputs);
  out += fmt::format("Outputs ({})\n", s.outputs.size()) + values_table(s.outputs);
  std::string inits =
      fmt::format("{}  ({})", s.initializer_count, human_bytes(s.initializer_bytes));
  if (s.external_initializer_count)
    inits += fmt::format(", {} in external data", s.external_initializer_count);
  field("Initializers", inits);
  field("Constants", fmt::format("{}  ({})", s.constant_count, human_bytes(s.constant_bytes)));
  std::string nodes = std::to_string(s.node_count);
  if (s.subgraph_count)
    nodes += fmt::format("  (+{} in {} subgraph{})", s.node_count_with_subgraphs - s.node_count,
                         s.subgraph_count, s.subgraph_count == 1 ? "" : "s");
  field("Nodes", nodes);
  out += fmt::format("Op types ({} kind{}{})\n", s.op_histogram.size(),
                     s.op_histogram.size() == 1 ? "" : "s",
                     s.subgraph_count ? ", subgraphs included" : "");
  out += histogram_text(s.op_histogram);
  if (s.options.layers) {
    out += fmt::format("\nGraph{} ({} node{})\n",
                       s.graph.name.empty() ? "" : " '" + s.graph.name + "'", s.graph.node_count,
                       s.graph.node_count == 1 ? "" : "s");
    render_graph(s.graph, s.options.attributes, "  ", out);
  }
  if (s.options.tensors) {
    out += fmt::format("\nTensors ({}, types and shapes from ONNX shape inference)\n",
                       s.tensors.size());
    std::vector<std::vector<std::string>> rows;
    size_t quantized = 0;
    for (const auto& t : s.tensors) {
      quantized += t.quantization.has_value();
      rows.push_back({t.value.name, t.value.type, t.value.has_shape ? dims_text(t.value) : "?",
                      t.producer + (t.quantization ? "  [quantized: " +
                                                         quant_params_text(*t.quantization) + "]"
                                                   : "")});
    }
    out += table(rows, {40, 16, 24, 0}, {false, false, false, false}, "  ");
    if (quantized)
      out += fmt::format(
          "  {} quantized tensor{} (scale and zero point from the QDQ and integer "
          "ops that make or take them)\n",
          quantized, quantized == 1 ? "" : "s");
    if (!s.tensors_error.empty())
      out += "  note: shape inference stopped at an error, so later tensors may lack types: " +
             s.tensors_error + "\n";
  }
  if (s.options.weights) {
    size_t consts = 0;
    for (const auto& w : s.weights) consts += w.source == "Constant";
    const size_t inits = s.weights.size() - consts;
    out += fmt::format("\nInitializer weights ({})\n", inits);
    if (inits) out += weights_text(s.weights, "initializer");
    out += fmt::format("\nConstant weights ({})\n", consts);
    if (consts) out += weights_text(s.weights, "Constant");
  }
  return out;
}

namespace {

using nlohmann::json;

json value_json(const ValueSummary& v) {
  json shape = nullptr;
  if (v.has_shape) {
    shape = json::array();
    for (size_t i = 0; i < v.dims.size(); ++i) {
      if (v.dim_values[i] >= 0)
        shape.push_back(v.dim_values[i]);
      else if (v.dims[i] == "?")
        shape.push_back(nullptr);
      else
        shape.push_back(v.dims[i]);
    }
  }
  return {{"name", v.name}, {"type", v.type}, {"shape", shape}};
}

json graph_json(const GraphSummary& g, bool attrs) {
  json nodes = json::array();
  for (const auto& n : g.nodes) {
    json jn = {{"index", n.index},   {"name", n.name},     {"op_type", n.op_type},
               {"domain", n.domain}, {"inputs", n.inputs}, {"outputs", n.outputs}};
    if (attrs) {
      json ja = json::array();
      for (const auto& a : n.attributes)
        ja.push_back({{"name", a.name}, {"type", a.type}, {"value", a.value}});
      jn["attributes"] = ja;
    }
    json subs = json::array();
    for (const auto& sg : n.subgraphs)
      subs.push_back({{"attribute", sg.attribute}, {"graph", graph_json(sg.graph.front(), attrs)}});
    jn["subgraphs"] = subs;
    nodes.push_back(jn);
  }
  return {{"name", g.name}, {"node_count", g.node_count}, {"nodes", nodes}};
}

json stat_json(const WeightSummary& w, double v) { return w.has_stats ? json(v) : json(nullptr); }

}  // namespace

nlohmann::json summary_to_json(const ModelSummary& s) {
  json j;
  j["file"] = {{"name", s.file_name}, {"path", s.path}, {"size_bytes", s.file_size}};
  j["ir_version"] = s.ir_version;
  j["producer"] = {{"name", s.producer_name}, {"version", s.producer_version}};
  j["domain"] = s.domain;
  j["model_version"] = s.model_version;
  j["doc_string"] = s.doc_string;
  j["opset_imports"] = json::array();
  for (const auto& [d, v] : s.opset_imports)
    j["opset_imports"].push_back({{"domain", d}, {"version", v}});
  j["inputs"] = json::array();
  for (const auto& v : s.inputs) j["inputs"].push_back(value_json(v));
  j["outputs"] = json::array();
  for (const auto& v : s.outputs) j["outputs"].push_back(value_json(v));
  j["initializers"] = {{"count", s.initializer_count},
                       {"bytes", s.initializer_bytes},
                       {"external_count", s.external_initializer_count}};
  j["constants"] = {{"count", s.constant_count}, {"bytes", s.constant_bytes}};
  j["nodes"] = {{"count", s.node_count},
                {"count_with_subgraphs", s.node_count_with_subgraphs},
                {"subgraph_count", s.subgraph_count}};
  j["op_histogram"] = json::array();
  for (const auto& o : s.op_histogram)
    j["op_histogram"].push_back({{"op_type", o.op_type}, {"count", o.count}});
  j["warnings"] = s.warnings;
  j["mode"] = {{"layers", s.options.layers},
               {"attributes", s.options.attributes},
               {"weights", s.options.weights},
               {"tensors", s.options.tensors}};
  if (s.options.layers) j["graph"] = graph_json(s.graph, s.options.attributes);
  if (s.options.tensors) {
    json ts = json::array();
    for (const auto& t : s.tensors) {
      json jt = value_json(t.value);
      jt["producer"] = t.producer;
      jt["quantization"] = nullptr;
      if (const auto& q = t.quantization) {
        auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
        jt["quantization"] = {{"op_type", q->op_type},
                              {"scale", opt(q->scale)},
                              {"zero_point", opt(q->zero_point)},
                              {"scale_tensor", q->scale_tensor},
                              {"zero_point_tensor", q->zero_point_tensor},
                              {"scale_count", q->scale_count}};
      }
      ts.push_back(std::move(jt));
    }
    j["tensors"] = std::move(ts);
    j["tensors_error"] = s.tensors_error;
  }
  if (s.options.weights) {
    json ws = json::array();
    for (const auto& w : s.weights) {
      json jw = {{"name", w.name},
                 {"source", w.source},
                 {"dtype", std::string(dtype_name(w.dtype))},
                 {"shape", w.shape},
                 {"bytes", w.bytes},
                 {"external", w.external},
                 {"min", stat_json(w, w.min)},
                 {"max", stat_json(w, w.max)},
                 {"mean", stat_json(w, w.mean)},
                 {"std", stat_json(w, w.std)},
                 {"nan_count", w.nan_count},
                 {"inf_count", w.inf_count}};
      if (!w.error.empty()) jw["error"] = w.error;
      ws.push_back(jw);
    }
    j["weights"] = ws;
  }
  return j;
}

}  // namespace onnxdbg
