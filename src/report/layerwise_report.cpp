// Terminal and JSON rendering of layerwise results.
#include "report/layerwise_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "comparator/precision.h"
#include "compare/error_text.h"
#include "model/graph.h"
#include "report/run_report.h"
#include "report/table.h"

namespace onnxdbg::report {

namespace {

/// "own" (the node alone is outside tolerance), "inherited" (alone it is within, and an input
/// disagrees), "in context" (alone it is within, and no input disagrees: the backend ran it
/// differently in the whole graph), or why unknown.
std::string error_source(const LayerComparison& c) {
  if (!c.observed || c.result.pass) return "";
  if (c.own) return c.own_failure() ? "own" : c.context_failure() ? "in context" : "inherited";
  if (!c.isolate_error.empty()) return "isolation failed";
  return "";
}

double rank_error(const LayerComparison& c) {
  const double e = c.own ? c.own->max_abs_error : c.result.max_abs_error;
  return std::isnan(e) ? INFINITY : e;
}

std::string node_json_name(const LayerTensor& t) {
  return t.node.empty() ? fmt::format("#{}", t.node_index) : t.node;
}

// The failing tensors of `backend` in the order every rendering ranks them (the text table, the
// JSON's layerwise_summary.backends[].worst, the HTML page's worst nodes): nodes failing on their
// own first, then by error (own where isolated, else total). A float16 node reading an overflowed
// input has an infinite own error, but inherited.
std::vector<const LayerComparison*> ranked_failures(const LayerwiseReport& rep,
                                                    const std::string& backend) {
  std::vector<const LayerComparison*> failing;
  for (const auto& c : rep.comparisons)
    if (c.backend == backend && c.observed && !c.result.pass) failing.push_back(&c);
  std::stable_sort(failing.begin(), failing.end(),
                   [](const LayerComparison* a, const LayerComparison* c) {
                     if (a->own_failure() != c->own_failure()) return a->own_failure();
                     return rank_error(*a) > rank_error(*c);
                   });
  return failing;
}

// The producing node for people: model/graph.h's node_label, "#12 Conv 'c1'".
std::string layer_node_label(const LayerTensor& t) {
  return node_label(t.node, t.op_type, static_cast<int64_t>(t.node_index));
}

// The pass in one line: tensors, batches, memory budget, reference runs, time; the control flow
// it went through; the tensors without a golden value.
void print_header(const LayerwiseReport& rep, std::ostream& os) {
  size_t batches = 0;
  for (const auto& b : rep.backends) batches = std::max<size_t>(batches, b.batches);
  const std::string golden = golden_label(rep.golden_source);
  os << "\nlayerwise against " << golden << ": " << rep.tensors.size() << " intermediate tensors, "
     << batches << (batches == 1 ? " batch" : " batches") << " under "
     << memory_size_string(rep.memory_budget) << ", " << rep.reference_runs
     << (rep.reference_runs == 1 ? " reference run" : " reference runs")
     << (rep.golden_run_shared ? " (the output comparison's too), " : ", ")
     << fmt::format("{:.2f} s", rep.seconds)
     << (rep.peak_rss_bytes > 0
             ? ", peak memory " + memory_size_string(static_cast<uint64_t>(rep.peak_rss_bytes))
             : "")
     << "\n";
  for (const auto& n : rep.notes) os << "note: " << n << "\n";
  if (!rep.taken_branches.empty()) {
    constexpr size_t kShown = 4;
    std::vector<std::string> shown;
    size_t ifs = 0, loops = 0, scans = 0;
    for (size_t i = 0; i < rep.taken_branches.size(); ++i) {
      const auto& t = rep.taken_branches[i];
      (t.op_type == "If" ? ifs : t.op_type == "Loop" ? loops : scans)++;
      if (i < kShown)
        shown.push_back("'" + t.node + "' " +
                        (t.op_type == "If" ? (t.then_branch ? "then_branch" : "else_branch")
                                           : fmt::format("{} iteration{}", t.iterations,
                                                         t.iterations == 1 ? "" : "s")));
    }
    std::vector<std::string> what;
    if (ifs)
      what.push_back(fmt::format("{} If node{} inside the branch taken", ifs, ifs == 1 ? "" : "s"));
    if (loops) what.push_back(fmt::format("{} Loop{} unrolled", loops, loops == 1 ? "" : "s"));
    if (scans) what.push_back(fmt::format("{} Scan{} unrolled", scans, scans == 1 ? "" : "s"));
    os << "control flow: " << fmt::format("{}", fmt::join(what, ", ")) << " ("
       << fmt::format("{}", fmt::join(shown, ", "))
       << (rep.taken_branches.size() > kShown ? ", ..." : "")
       << "); their nodes are named by path\n";
  }
  for (const auto& n : rep.control_flow_notes) os << "note: " << n << "\n";
  if (!rep.no_golden.empty()) {
    constexpr size_t kShown = 5;
    std::vector<std::string> shown;
    for (size_t i = 0; i < rep.no_golden.size() && i < kShown; ++i)
      shown.push_back("'" + rep.no_golden[i] + "'");
    os << "no golden value: " << rep.no_golden.size() << " tensor"
       << (rep.no_golden.size() == 1 ? "" : "s") << " not compared ("
       << fmt::format("{}", fmt::join(shown, ", "))
       << (rep.no_golden.size() > kShown ? ", ..." : "") << "; --json lists all)\n";
  }
}

// One row per backend (compared, not observable, outside tolerance, status) and its notes.
void print_backend_table(const LayerwiseReport& rep, std::ostream& os, bool color) {
  Table summary({"backend", "compared", "not observable", "outside tolerance", "status"},
                {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kLeft});
  for (const auto& b : rep.backends) {
    summary.add_row(
        {b.backend, std::to_string(b.observed), std::to_string(b.not_observed),
         std::to_string(b.failed),
         b.ok ? (b.failed ? colorize("FAIL", "red", color) : colorize("pass", "green", color))
              : colorize("failed: " + b.error, "red", color)});
  }
  summary.print(os);
  for (const auto& b : rep.backends)
    for (const auto& n : b.notes) os << "  note (" << b.backend << "): " << n << "\n";
}

// What `backend` could not observe, and its `top` worst tensors (ranked_failures' order).
void print_worst(const LayerwiseReport& rep, const std::string& backend, std::ostream& os,
                 bool color, size_t top) {
  const LayerComparison* hidden = nullptr;
  size_t hidden_count = 0;
  for (const auto& c : rep.comparisons) {
    if (c.backend != backend || c.observed) continue;
    if (!hidden) hidden = &c;
    ++hidden_count;
  }
  if (hidden_count) {
    os << "  not observable on " << backend << ": " << hidden_count << " tensor"
       << (hidden_count == 1 ? "" : "s") << " (e.g. '" << rep.tensors[hidden->tensor].name
       << "': " << hidden->note << ")\n";
  }
  const std::vector<const LayerComparison*> failing = ranked_failures(rep, backend);
  if (failing.empty()) return;
  os << "\nworst tensors on " << backend << " (" << failing.size()
     << " outside tolerance; ranked by " << (failing.front()->isolated ? "own" : "total")
     << " error):\n";
  Table t(
      {"node", "tensor", "max abs err", "max rel err", "own err", "error is", "NaN/Inf", "result"},
      {Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kLeft,
       Align::kRight, Align::kLeft});
  for (size_t i = 0; i < failing.size() && i < top; ++i) {
    const auto& c = *failing[i];
    const LayerTensor& lt = rep.tensors[c.tensor];
    std::string nan = "-";
    if (c.result.nan_or_inf_actual || lt.golden_nan_or_inf)
      nan = fmt::format("{} (golden {})", c.result.nan_or_inf_actual, lt.golden_nan_or_inf);
    t.add_row({layer_node_label(lt), lt.name, max_abs_error_text(c.result),
               short_number(c.result.max_rel_error),
               c.own ? short_number(c.own->max_abs_error) : "-", error_source(c), nan,
               colorize("FAIL", "red", color)});
  }
  t.print(os);
  if (failing.size() > top)
    os << "  ... and " << failing.size() - top << " more (--json lists all)\n";
}

// Where NaN/Inf first appears (in the golden values, and on each backend), and the golden
// tensors beyond float16's range.
void print_nonfinite(const LayerwiseReport& rep, std::ostream& os) {
  const std::string golden = golden_label(rep.golden_source);
  for (const auto& lt : rep.tensors) {
    if (!lt.golden_nan_or_inf) continue;
    os << "\nNaN/Inf first appears in tensor '" << lt.name << "' of node " << layer_node_label(lt)
       << (rep.golden_source == "reference" ? " on reference (" : " in " + golden + " (")
       << lt.golden_nan_or_inf << " elements)\n";
    break;
  }
  for (const auto& b : rep.backends) {
    for (const auto& c : rep.comparisons) {
      if (c.backend != b.backend || !c.observed || !c.result.nan_or_inf_actual) continue;
      const LayerTensor& lt = rep.tensors[c.tensor];
      os << "NaN/Inf first appears in tensor '" << lt.name << "' of node " << layer_node_label(lt)
         << " on " << b.backend << " (" << c.result.nan_or_inf_actual << " elements)\n";
      break;
    }
  }
  size_t over = 0;
  const LayerTensor* first_over = nullptr;
  for (const auto& lt : rep.tensors) {
    if (lt.dtype != DType::kFloat && lt.dtype != DType::kDouble) continue;
    if (lt.golden_max_abs > kFloat16Max) {
      ++over;
      if (!first_over) first_over = &lt;
    }
  }
  if (first_over) {
    os << "float16 range: " << over << " tensor" << (over == 1 ? "" : "s")
       << " exceed 65504 in the golden values (first: '" << first_over->name << "' of node "
       << layer_node_label(*first_over) << ", max |value| "
       << short_number(first_over->golden_max_abs) << "); they overflow in float16\n";
  }
}

// The first divergent node, why it is one (own error, in context, or first outside tolerance)
// and its repro; or "none".
void print_first_divergent(const LayerwiseReport& rep, std::ostream& os, bool color) {
  if (!rep.first) {
    bool any_fail = false;
    for (const auto& b : rep.backends) any_fail = any_fail || b.failed > 0;
    os << "\nfirst divergent node: none"
       << (any_fail ? " (no node is outside tolerance on its own)" : "") << "\n";
    return;
  }
  const LayerTensor& lt = rep.tensors[rep.first->tensor];
  os << "\n"
     << colorize("first divergent node", "bold", color) << ": " << layer_node_label(lt)
     << ", tensor '" << lt.name << "', on " << rep.first->backend;
  if (rep.first->basis == "context") {
    os << ": alone, on golden inputs, it agrees (own error "
       << short_number(rep.first->own_error.value_or(0))
       << "), and none of its inputs disagrees: the backend computed it differently within the "
          "whole graph (fused with a neighbour, in another layout, or in float32)";
  } else if (rep.first->own_error) {
    os << ": its own error (alone, on golden inputs) is " << short_number(*rep.first->own_error)
       << ", outside tolerance";
  } else {
    os << ": the first tensor outside tolerance (run with --isolate to separate its own error "
          "from inherited error)";
  }
  os << "\n";
  if (!rep.repro_dir.empty())
    os << "  repro: " << rep.repro_dir.string() << " (model.onnx with that node alone"
       << (rep.first->precision == "fp16" ? " in float16" : "")
       << " + test_data_set_0 with golden inputs and outputs)\n";
}

}  // namespace

void print_layerwise_report(const LayerwiseReport& rep, std::ostream& os, bool color, size_t top) {
  print_header(rep, os);
  print_backend_table(rep, os, color);
  for (const auto& b : rep.backends) print_worst(rep, b.backend, os, color, top);
  print_nonfinite(rep, os);
  print_first_divergent(rep, os, color);
}

namespace {

using nlohmann::json;

// One entry of --json's "layerwise": a tensor compared on a backend.
json comparison_json(const LayerwiseReport& rep, const LayerComparison& c) {
  const LayerTensor& lt = rep.tensors[c.tensor];
  json e = {{"tensor", lt.name},
            {"node", node_json_name(lt)},
            {"node_index", lt.node_index},
            {"op_type", lt.op_type},
            {"backend", c.backend},
            {"dtype", dtype_name(lt.dtype)},
            {"shape", lt.shape},
            {"observed", c.observed},
            {"note", c.note},
            {"atol", c.tol.atol},
            {"rtol", c.tol.rtol},
            {"max_abs_error", c.observed ? json_number(c.result.max_abs_error) : json(nullptr)},
            {"max_rel_error", c.observed ? json_number(c.result.max_rel_error) : json(nullptr)},
            {"mismatches", c.observed ? json(c.result.mismatches) : json(nullptr)},
            {"elements", c.observed ? json(c.result.numel) : json(nullptr)},
            {"own_error", c.own ? json_number(c.own->max_abs_error) : json(nullptr)},
            {"own_pass", c.own ? json(c.own->pass) : json(nullptr)},
            {"input_beyond_fp16", c.input_beyond_fp16},
            {"computed_in_float32", c.computed_in_float32},
            {"own_computed_in_float32", c.own_computed_in_float32},
            {"error_source", error_source(c).empty() ? json(nullptr) : json(error_source(c))},
            {"isolate_error", c.isolate_error.empty() ? json(nullptr) : json(c.isolate_error)},
            {"nan_or_inf", c.observed ? c.result.nan_or_inf_actual : 0},
            {"golden_nan_or_inf", lt.golden_nan_or_inf},
            {"fp16_overflow", lt.golden_max_abs > kFloat16Max},
            {"pass", c.pass()}};
  add_step_fields(e, c.result);  // null when the tensor was not observed: no step type
  return e;
}

// One entry of layerwise_summary.backends, with its failing tensors in ranked_failures' order.
json backend_summary_json(const LayerwiseReport& rep, const LayerwiseBackend& b) {
  json worst = json::array();
  for (const LayerComparison* c : ranked_failures(rep, b.backend)) {
    const LayerTensor& lt = rep.tensors[c->tensor];
    worst.push_back(
        {{"tensor", lt.name},
         {"node", node_json_name(lt)},
         {"node_index", lt.node_index},
         {"label", layer_node_label(lt)},
         {"error_source", error_source(*c).empty() ? json(nullptr) : json(error_source(*c))}});
  }
  return {{"backend", b.backend},
          {"ok", b.ok},
          {"error", b.ok ? json(nullptr) : json(b.error)},
          {"batches", b.batches},
          {"observed", b.observed},
          {"not_observed", b.not_observed},
          {"failed", b.failed},
          {"computed_in_float32", b.computed_in_float32},
          {"notes", b.notes},
          {"worst", std::move(worst)}};
}

json first_divergent_json(const LayerwiseReport& rep) {
  if (!rep.first) return nullptr;
  const LayerTensor& lt = rep.tensors[rep.first->tensor];
  return {{"node", node_json_name(lt)},
          {"node_index", lt.node_index},
          {"label", layer_node_label(lt)},
          {"op_type", lt.op_type},
          {"backend", rep.first->backend},
          {"tensor", lt.name},
          {"own_error", rep.first->own_error ? json_number(*rep.first->own_error) : json(nullptr)},
          {"basis", rep.first->basis},
          {"precision", rep.first->precision},
          {"repro", rep.repro_dir.empty() ? json(nullptr) : json(rep.repro_dir.string())}};
}

}  // namespace

void add_layerwise_json(const LayerwiseReport& rep, nlohmann::json& j) {
  json entries = json::array();
  for (const auto& c : rep.comparisons) entries.push_back(comparison_json(rep, c));
  j["layerwise"] = std::move(entries);
  json backends = json::array();
  for (const auto& b : rep.backends) backends.push_back(backend_summary_json(rep, b));
  j["layerwise_summary"] = {{"tensors", rep.tensors.size()},
                            {"golden_source", rep.golden_source},
                            {"no_golden", rep.no_golden},
                            {"memory_budget_bytes", rep.memory_budget},
                            {"reference_runs", rep.reference_runs},
                            {"golden_run_shared", rep.golden_run_shared},
                            {"seconds", rep.seconds},
                            {"peak_rss_bytes", rep.peak_rss_bytes},
                            {"spilled_bytes", rep.spilled_bytes},
                            {"notes", rep.notes},
                            {"backends", std::move(backends)}};
  json taken = json::array();
  for (const auto& t : rep.taken_branches)
    taken.push_back(
        {{"node", t.node},
         {"op_type", t.op_type},
         {"branch", t.op_type == "If" ? (t.then_branch ? "then_branch" : "else_branch") : "body"},
         {"iterations", t.op_type == "If" ? json(nullptr) : json(t.iterations)},
         {"depth", t.depth}});
  j["layerwise_summary"]["taken_branches"] = std::move(taken);
  j["layerwise_summary"]["control_flow_notes"] = rep.control_flow_notes;
  j["first_divergent_node"] = first_divergent_json(rep);
}

}  // namespace onnxdbg::report
