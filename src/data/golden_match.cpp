// Golden values fitted to the model (see golden_match.h): keys renamed (TensorFlow's ":0", and
// with --golden-names suffix a key that ends one tensor's name), then tensors transposed to the
// model's axis order (--golden-layout auto|nhwc), with the notes that say what was done.
#include "data/golden_match.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/text.h"
#include "core/transpose.h"
#include "data/samples.h"
#include "model/graph.h"
#include "model/model.h"
#include "model/shape_inference.h"

namespace onnxdbg {

Expected<GoldenNames> golden_names_from_name(std::string_view name, std::string_view what) {
  return enum_from_name(kGoldenNamesNames, name, what);
}

Expected<GoldenLayout> golden_layout_from_name(std::string_view name, std::string_view what) {
  return enum_from_name(kGoldenLayoutNames, name, what);
}

std::string_view golden_names_name(GoldenNames n) { return enum_name(kGoldenNamesNames, n); }
std::string_view golden_layout_name(GoldenLayout l) { return enum_name(kGoldenLayoutNames, l); }

namespace {

constexpr size_t kShown = 5;  // names a note or an error lists before "and N more"

/// "'a', 'b', 'c' and 4 more" of the first kShown of `items`, each written by `show`.
template <class T, class Show>
std::string listed(const std::vector<T>& items, Show show) {
  std::vector<std::string> shown;
  for (size_t i = 0; i < items.size() && i < kShown; ++i) shown.push_back(show(items[i]));
  std::string s = fmt::format("{}", fmt::join(shown, ", "));
  if (items.size() > kShown) s += fmt::format(" and {} more", items.size() - kShown);
  return s;
}

std::string quoted_list(const std::vector<std::string>& names) {
  return listed(names, [](const std::string& n) { return "'" + n + "'"; });
}

// --- names ----------------------------------------------------------------------------------

/// `name` without TensorFlow's ":0" (the first output of an op) at its end.
std::string_view without_zero(std::string_view name) {
  return name.size() > 2 && name.ends_with(":0") ? name.substr(0, name.size() - 2) : name;
}

/// The '/'-separated parts of `name` (":0" dropped).
std::vector<std::string_view> parts_of(std::string_view name) {
  name = without_zero(name);
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

/// Whether the model's scope `model` is the key's scope `key` numbered by a converter: "key_N".
bool numbered_scope(std::string_view model, std::string_view key) {
  if (model.size() < key.size() + 2 || !model.starts_with(key) || model[key.size()] != '_')
    return false;
  const std::string_view digits = model.substr(key.size() + 1);
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Whether `value`'s parts end with `key`'s: each part equal, or (`numbered`) the scopes
/// (every key part but the last) equal or numbered.
bool ends_with_parts(const std::vector<std::string_view>& value,
                     const std::vector<std::string_view>& key, bool numbered) {
  if (value.size() < key.size()) return false;
  const size_t off = value.size() - key.size();
  for (size_t i = 0; i < key.size(); ++i) {
    const std::string_view v = value[off + i];
    if (v == key[i]) continue;
    if (!numbered || i + 1 == key.size() || !numbered_scope(v, key[i])) return false;
  }
  return true;
}

/// The values by their last part (":0" dropped), for the suffix search.
class SuffixIndex {
 public:
  explicit SuffixIndex(const std::set<std::string>& values) {
    for (const auto& v : values) by_last_[std::string(parts_of(v).back())].push_back(&v);
  }
  /// The values whose names end with `key` at a '/' (see ends_with_parts): those with equal
  /// parts when there are any, else those with numbered scopes.
  std::vector<std::string> matches(const std::string& key) const {
    const auto kp = parts_of(key);
    auto it = by_last_.find(std::string(kp.back()));
    if (it == by_last_.end()) return {};
    for (bool numbered : {false, true}) {
      std::vector<std::string> found;
      for (const std::string* v : it->second)
        if (ends_with_parts(parts_of(*v), kp, numbered)) found.push_back(*v);
      if (!found.empty()) return found;
    }
    return {};
  }

 private:
  std::unordered_map<std::string, std::vector<const std::string*>> by_last_;
};

/// The model's name of TensorFlow's `key`: "NAME" for "NAME:0", "NAME:0" for "NAME"; "" when
/// neither is a value.
std::string tensorflow_name(const std::string& key, const std::set<std::string>& values) {
  if (key.size() > 2 && key.ends_with(":0") && values.count(key.substr(0, key.size() - 2)))
    return key.substr(0, key.size() - 2);
  if (values.count(key + ":0")) return key + ":0";
  return "";
}

/// Whether check_samples drops `key` as another backend's output ("BACKEND/OUTPUT").
bool backend_output_key(const std::string& key, const onnx::GraphProto& graph) {
  const size_t slash = key.rfind('/');
  if (slash == std::string::npos) return false;
  const std::string tail = key.substr(slash + 1);
  return std::any_of(graph.output().begin(), graph.output().end(),
                     [&](const auto& o) { return o.name() == tail; });
}

struct NameContext {
  const std::set<std::string>& values;
  const onnx::GraphProto& graph;
  const SuffixIndex* suffix;  ///< null with --golden-names exact
  const std::string& what;
};

/// The model's tensor `key` names ("" for none: left to check_samples). Errors: a key that ends
/// several tensors' names.
Expected<std::string> target_of(const std::string& key, const NameContext& c) {
  if (std::string tf = tensorflow_name(key, c.values); !tf.empty()) return tf;
  if (!c.suffix || backend_output_key(key, c.graph)) return std::string();
  std::vector<std::string> found = c.suffix->matches(key);
  if (found.size() == 1) return found.front();
  if (found.empty()) return std::string();
  return invalid_argument(fmt::format(
      "{} holds '{}', whose name ends the names of {} tensors of the model (--golden-names "
      "suffix): {}; give the key more of its scope so that it names one",
      c.what, key, found.size(), quoted_list(found)));
}

/// Renames the keys of every sample (see match_golden) into `report.renamed`.
Status rename_keys(std::vector<Sample>& samples, const NameContext& c, GoldenMatchReport& report) {
  std::map<std::string, std::string> targets;  // every key that is no value -> its tensor or ""
  for (const Sample& s : samples)
    for (const auto& [key, t] : s)
      if (!c.values.count(key) && !targets.count(key)) {
        ODB_ASSIGN_OR_RETURN(targets[key], target_of(key, c));
      }
  std::map<std::string, std::string> done;  // key -> tensor, for the keys actually renamed
  std::set<std::string> dropped;
  for (Sample& s : samples) {
    Sample renamed;
    std::map<std::string, std::string> taken_by;  // tensor -> the key that named it
    for (auto& [key, t] : s) {
      auto it = targets.find(key);
      // --golden-names suffix reads a framework's dump: what matches no tensor was fused,
      // folded or renamed by the converter, and is dropped (a note says so).
      if (c.suffix && it != targets.end() && it->second.empty() &&
          !backend_output_key(key, c.graph)) {
        dropped.insert(key);
        continue;
      }
      std::string name = it == targets.end() || it->second.empty() ? key : it->second;
      // --golden-names exact keeps check_samples' rule: a key whose tensor is held keeps its own
      // name (and is refused there); a suffix match that collides is refused here.
      if (name != key && s.count(name) && !c.suffix) name = key;
      if (auto [at, fresh] = taken_by.emplace(name, key); !fresh)
        return invalid_argument(fmt::format(
            "{} holds '{}' and '{}', which both name the model's tensor '{}' (--golden-names "
            "suffix); keep one of them",
            c.what, at->second, key, name));
      if (name != key) done.emplace(key, name);
      renamed.emplace(name, std::move(t));
    }
    s = std::move(renamed);
  }
  report.renamed.assign(done.begin(), done.end());
  report.dropped.assign(dropped.begin(), dropped.end());
  return Status::ok();
}

// --- layout ---------------------------------------------------------------------------------

/// The model's shape of a tensor: -1 for a dimension without a value.
Shape shape_of(const onnx::TypeProto& type, bool& known) {
  onnx::ValueInfoProto vi;
  *vi.mutable_type() = type;
  const ValueSignature sig = value_signature(vi);
  known = sig.has_shape;
  return sig.shape;
}

/// The model's shapes of `names` (see match_golden for the order of the sources).
std::map<std::string, Shape> model_shapes(const onnx::ModelProto& model,
                                          const std::set<std::string>& names) {
  std::map<std::string, Shape> out;
  auto take = [&](const std::string& name, const onnx::TypeProto& type) {
    if (!names.count(name) || out.count(name)) return;
    bool known = false;
    Shape s = shape_of(type, known);
    if (known) out.emplace(name, std::move(s));
  };
  const auto& g = model.graph();
  for (const auto* list : {&g.input(), &g.output()})
    for (const auto& vi : *list) take(vi.name(), vi.type());
  for (const auto& init : g.initializer())
    if (names.count(init.name()) && !out.count(init.name()))
      out.emplace(init.name(), Shape(init.dims().begin(), init.dims().end()));
  const InferredTypes inferred = infer_shapes(model);
  for (const auto* types : {&inferred.types, &inferred.subgraph_types})
    for (const auto& [name, type] : *types) take(name, type);
  walk_graphs(g, [&](const GraphVisit& v) {
    for (const auto* list : {&v.graph->value_info(), &v.graph->input(), &v.graph->output()})
      for (const auto& vi : *list) take(vi.name(), vi.type());
  });
  return out;
}

/// Whether the golden shape `g` transposed by `perm` is the model's `m`: every dimension equal,
/// one without a value in the model matching any unless `perm` moves it there.
bool fits(const Shape& g, const Shape& m, const std::vector<int64_t>& perm) {
  if (g.size() != m.size() || perm.size() != g.size()) return false;
  for (size_t i = 0; i < m.size(); ++i) {
    const auto p = static_cast<size_t>(perm[i]);
    if (m[i] < 0 ? p != i : m[i] != g[p]) return false;
  }
  return true;
}

std::vector<int64_t> identity(size_t rank) {
  std::vector<int64_t> p(rank);
  for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(i);
  return p;
}

/// Channels-last to channels-first, (0, r-1, 1, ..., r-2): NHWC -> NCHW for rank 4.
std::vector<int64_t> channels_first(size_t rank) {
  std::vector<int64_t> p{0, static_cast<int64_t>(rank) - 1};
  for (size_t i = 1; i + 1 < rank; ++i) p.push_back(static_cast<int64_t>(i));
  return p;
}

/// Channels-first to channels-last, (0, 2, ..., r-1, 1): NCHW -> NHWC for rank 4.
std::vector<int64_t> channels_last(size_t rank) {
  std::vector<int64_t> p{0};
  for (size_t i = 2; i < rank; ++i) p.push_back(static_cast<int64_t>(i));
  p.push_back(1);
  return p;
}

/// The permutations auto tries for `rank`, best first for ties: channels-last to first, first
/// to last, then every other in lexicographic order (ranks up to 6; the first two beyond).
std::vector<std::vector<int64_t>> candidate_perms(size_t rank) {
  std::vector<std::vector<int64_t>> out;
  const auto id = identity(rank);
  auto add = [&](const std::vector<int64_t>& p) {
    if (p != id && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (rank >= 3) {
    add(channels_first(rank));
    add(channels_last(rank));
  }
  constexpr size_t kMaxEnumeratedRank = 6;
  if (rank > kMaxEnumeratedRank) return out;
  auto p = id;
  while (std::next_permutation(p.begin(), p.end())) add(p);
  return out;
}

/// One golden tensor (of the first sample that holds it) and its model shape.
struct LayoutEntry {
  std::string name;
  Shape golden;
  const Shape* model = nullptr;  ///< null when the model does not know it
};

/// What the layout does: the permutation each tensor takes (identity: none), and the tensors
/// that take the model's shape as they are (only dimensions of size 1 differ).
struct LayoutPlan {
  std::map<std::string, std::vector<int64_t>> perms;
  std::map<size_t, std::vector<int64_t>> by_rank;
  std::map<std::string, Shape> reshapes;
};

/// Whether golden shape `g` is the model's `m` with dimensions of size 1 added or removed (TF's
/// Mean 1x1280 against tf2onnx's GlobalAveragePool 1x1280x1x1): the same elements in the same
/// order, so a reshape, not a transpose, fits it. Every dimension of `m` must be known.
bool unit_dims_fit(const Shape& g, const Shape& m) {
  if (g == m) return false;
  Shape a, b;
  for (int64_t d : g)
    if (d != 1) a.push_back(d);
  for (int64_t d : m) {
    if (d < 0) return false;
    if (d != 1) b.push_back(d);
  }
  return a == b;
}

/// A tensor no permutation fits: reshaped when unit_dims_fit, else listed as unfit.
void plan_unfit(const LayoutEntry& e, LayoutPlan& plan, GoldenMatchReport& report) {
  if (unit_dims_fit(e.golden, *e.model))
    plan.reshapes[e.name] = *e.model;
  else
    report.unfit.push_back(e.name);
}

/// The layouts a converter changed, per rank: the perm of each Transpose that reads a graph input
/// (tf2onnx: NHWC input -> its NCHW graph) and the inverse of each that writes a graph output.
std::map<size_t, std::vector<int64_t>> converter_perms(const onnx::GraphProto& g) {
  std::set<std::string> inputs, outputs;
  for (const auto& i : g.input()) inputs.insert(i.name());
  for (const auto& o : g.output()) outputs.insert(o.name());
  std::map<size_t, std::vector<int64_t>> out;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Transpose" || n.input_size() < 1 || n.output_size() < 1) continue;
    std::vector<int64_t> perm;
    for (const auto& a : n.attribute())
      if (a.name() == "perm") perm.assign(a.ints().begin(), a.ints().end());
    if (perm.empty() || !is_axis_permutation(perm, perm.size())) continue;
    if (inputs.count(n.input(0))) {
      out.emplace(perm.size(), perm);
    } else if (outputs.count(n.output(0))) {
      std::vector<int64_t> inverse(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = int64_t(i);
      out.emplace(perm.size(), inverse);
    }
  }
  return out;
}

/// Whether `name` is TensorFlow's layout in the model although the converter changed the layout
/// of its rank by `perm`: a graph input or output, or the output of a Transpose undoing `perm`.
bool kept_in_framework_layout(const std::string& name, const std::vector<int64_t>& perm,
                              const onnx::GraphProto& g) {
  for (const auto* list : {&g.input(), &g.output()})
    for (const auto& vi : *list)
      if (vi.name() == name) return true;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Transpose" || n.output_size() < 1 || n.output(0) != name) continue;
    for (const auto& a : n.attribute()) {
      if (a.name() != "perm" || static_cast<size_t>(a.ints_size()) != perm.size()) continue;
      bool undoes = true;  // perm[back[i]] == i
      for (int i = 0; i < a.ints_size(); ++i)
        undoes = undoes && perm[static_cast<size_t>(a.ints(i))] == i;
      return undoes;
    }
  }
  return false;
}

/// auto: per rank, the permutation of the converter's Transposes at the graph's inputs and
/// outputs (converter_perms), else the candidate that fits the most tensors not of the model's
/// shape. A tensor that fits both identity and its rank's permutation (1x8x8x8) takes the
/// converter's permutation when there is one (unless kept_in_framework_layout), else stays.
void plan_auto(const std::vector<LayoutEntry>& entries, const onnx::GraphProto& graph,
               LayoutPlan& plan, GoldenMatchReport& report) {
  const std::map<size_t, std::vector<int64_t>> converter = converter_perms(graph);
  plan.by_rank = converter;
  std::map<size_t, std::vector<const LayoutEntry*>> needing;
  for (const auto& e : entries)
    if (e.model && !fits(e.golden, *e.model, identity(e.golden.size())))
      needing[e.golden.size()].push_back(&e);
  for (const auto& [rank, list] : needing) {
    if (converter.count(rank)) continue;
    size_t best = 0;
    for (const auto& p : candidate_perms(rank)) {
      const auto n =
          static_cast<size_t>(std::count_if(list.begin(), list.end(), [&](const LayoutEntry* e) {
            return fits(e->golden, *e->model, p);
          }));
      if (n > best) {
        best = n;
        plan.by_rank[rank] = p;
      }
    }
  }
  for (const auto& e : entries) {
    if (!e.model) continue;
    auto it = plan.by_rank.find(e.golden.size());
    const bool as_is = fits(e.golden, *e.model, identity(e.golden.size()));
    const bool permuted = it != plan.by_rank.end() && fits(e.golden, *e.model, it->second);
    if (as_is && permuted && converter.count(e.golden.size())) {
      if (!kept_in_framework_layout(e.name, it->second, graph)) plan.perms[e.name] = it->second;
    } else if (as_is && permuted)
      report.ambiguous.push_back(e.name);
    else if (permuted)
      plan.perms[e.name] = it->second;
    else if (!as_is)
      plan_unfit(e, plan, report);
  }
}

/// nhwc: ranks 3-5 whose model shape is the golden's channels-first permutation.
void plan_nhwc(const std::vector<LayoutEntry>& entries, LayoutPlan& plan,
               GoldenMatchReport& report) {
  for (const auto& e : entries) {
    if (!e.model) continue;
    const size_t rank = e.golden.size();
    if (rank >= 3 && rank <= 5 && fits(e.golden, *e.model, channels_first(rank))) {
      plan.perms[e.name] = channels_first(rank);
      plan.by_rank[rank] = channels_first(rank);
    } else if (!fits(e.golden, *e.model, identity(rank))) {
      plan_unfit(e, plan, report);
    }
  }
}

/// The golden tensors of rank 2 and more that are values of the model (the others are left to
/// check_samples, which drops or refuses them), each once (the first sample holding it), with
/// the model's shapes.
std::vector<LayoutEntry> layout_entries(const std::vector<Sample>& samples,
                                        const std::set<std::string>& values,
                                        const std::map<std::string, Shape>& shapes,
                                        GoldenMatchReport& report) {
  std::vector<LayoutEntry> entries;
  std::set<std::string> seen;
  for (const Sample& s : samples)
    for (const auto& [name, t] : s) {
      if (t.shape().size() < 2 || !values.count(name) || !seen.insert(name).second) continue;
      auto it = shapes.find(name);
      if (it == shapes.end()) report.unknown_shape.push_back(name);
      entries.push_back({name, t.shape(), it == shapes.end() ? nullptr : &it->second});
    }
  return entries;
}

/// Transposes the tensors `plan` names in every sample (where the permutation fits that sample's
/// tensor) and lists them per rank in `report.permutations`.
Status apply_plan(std::vector<Sample>& samples, const LayoutPlan& plan,
                  const std::map<std::string, Shape>& shapes, GoldenMatchReport& report) {
  std::map<size_t, GoldenPermutation> per_rank;
  for (const auto& [name, perm] : plan.perms) {
    bool any = false;
    for (Sample& s : samples) {
      auto it = s.find(name);
      if (it == s.end() || !fits(it->second.shape(), shapes.at(name), perm)) continue;
      ODB_ASSIGN_OR_RETURN(Tensor t, transpose_axes(it->second, perm));
      it->second = std::move(t);
      any = true;
    }
    if (!any) continue;
    GoldenPermutation& gp = per_rank[perm.size()];
    gp.rank = perm.size();
    gp.perm = perm;
    gp.transposed.push_back(name);
  }
  for (auto& [rank, gp] : per_rank) report.permutations.push_back(std::move(gp));
  for (const auto& [name, shape] : plan.reshapes) {
    bool any = false;
    for (Sample& s : samples) {
      auto it = s.find(name);
      if (it == s.end() || !unit_dims_fit(it->second.shape(), shape)) continue;
      ODB_ASSIGN_OR_RETURN(Tensor t, std::move(it->second).reshaped(shape));
      it->second = std::move(t);
      any = true;
    }
    if (any) report.reshaped.push_back(name);
  }
  return Status::ok();
}

Status fit_layout(std::vector<Sample>& samples, const onnx::ModelProto& model,
                  const std::set<std::string>& values, GoldenMatchReport& report) {
  std::set<std::string> names;
  for (const Sample& s : samples)
    for (const auto& [name, t] : s)
      if (t.shape().size() >= 2 && values.count(name)) names.insert(name);
  if (names.empty()) return Status::ok();
  const std::map<std::string, Shape> shapes = model_shapes(model, names);
  const std::vector<LayoutEntry> entries = layout_entries(samples, values, shapes, report);
  LayoutPlan plan;
  if (report.options.layout == GoldenLayout::kAuto)
    plan_auto(entries, model.graph(), plan, report);
  else
    plan_nhwc(entries, plan, report);
  return apply_plan(samples, plan, shapes, report);
}

// --- notes ----------------------------------------------------------------------------------

std::string perm_text(const std::vector<int64_t>& perm) {
  return fmt::format("({})", fmt::join(perm, ","));
}

/// "(channels-last to channels-first)" where `perm` is one of the two usual ones.
std::string perm_meaning(const std::vector<int64_t>& perm) {
  if (perm.size() >= 3 && perm == channels_first(perm.size()))
    return " (channels-last to channels-first)";
  if (perm.size() >= 3 && perm == channels_last(perm.size()))
    return " (channels-first to channels-last)";
  return "";
}

void layout_notes(const std::string& what, GoldenMatchReport& r) {
  const std::string flag = fmt::format("--golden-layout {}", golden_layout_name(r.options.layout));
  std::vector<std::string> ranks;
  size_t n = 0;
  for (const auto& p : r.permutations) {
    n += p.transposed.size();
    ranks.push_back(
        fmt::format("rank {} by {}{}, {}: {}", p.rank, perm_text(p.perm), perm_meaning(p.perm),
                    plural(p.transposed.size(), "tensor", "tensors"), quoted_list(p.transposed)));
  }
  if (n > 0)
    r.notes.push_back(fmt::format("transposed {} of {} to the model's axis order ({}): {}",
                                  plural(n, "golden tensor", "golden tensors"), what, flag,
                                  fmt::join(ranks, "; ")));
  else if (r.unfit.empty() && r.reshaped.empty())
    r.notes.push_back(fmt::format("{}: no golden tensor of {} needed a transpose", flag, what));
  const auto as = [](size_t n) { return n == 1 ? "as it is" : "as they are"; };
  if (!r.ambiguous.empty())
    r.notes.push_back(fmt::format(
        "{} the model's shape both as {} and transposed by {} rank's permutation, so the shape "
        "cannot tell {} layout; kept {}: {} (--golden-layout nhwc transposes every channels-last "
        "tensor)",
        plural(r.ambiguous.size(), "golden tensor has", "golden tensors have"),
        as(r.ambiguous.size()), r.ambiguous.size() == 1 ? "its" : "their",
        r.ambiguous.size() == 1 ? "its" : "their", as(r.ambiguous.size()),
        quoted_list(r.ambiguous)));
  if (!r.reshaped.empty())
    r.notes.push_back(fmt::format(
        "reshaped {} of {} to the model's shape, which has the same elements in the same order "
        "with dimensions of size 1 added or removed ({}): {}",
        plural(r.reshaped.size(), "golden tensor", "golden tensors"), what, flag,
        quoted_list(r.reshaped)));
  if (!r.unfit.empty())
    r.notes.push_back(fmt::format(
        "{} not the model's and no permutation {} took makes {} so; compared {}: {}",
        plural(r.unfit.size(), "golden tensor's shape is", "golden tensors' shapes are"), flag,
        r.unfit.size() == 1 ? "it" : "them", as(r.unfit.size()), quoted_list(r.unfit)));
  if (!r.unknown_shape.empty())
    r.notes.push_back(fmt::format(
        "{} of rank 2 or more {} no shape in the model (declared or inferred); compared {}: {}",
        plural(r.unknown_shape.size(), "golden tensor", "golden tensors"),
        r.unknown_shape.size() == 1 ? "has" : "have", as(r.unknown_shape.size()),
        quoted_list(r.unknown_shape)));
}

void name_notes(const std::string& what, GoldenMatchReport& r) {
  if (r.options.names != GoldenNames::kSuffix) return;
  if (!r.dropped.empty())
    r.notes.push_back(fmt::format(
        "dropped {} of {} that name no tensor of the model, not even by suffix (fused, folded or "
        "renamed by the converter; --golden-names suffix): {}",
        plural(r.dropped.size(), "golden key", "golden keys"), what, quoted_list(r.dropped)));
  if (r.renamed.empty()) {
    if (r.dropped.empty())
      r.notes.push_back(fmt::format(
          "--golden-names suffix: every key of {} is a tensor name of the model", what));
    return;
  }
  r.notes.push_back(fmt::format(
      "renamed {} of {} to the model's tensor names (--golden-names suffix): {}",
      plural(r.renamed.size(), "golden key", "golden keys"), what,
      listed(r.renamed,
             [](const auto& kv) { return "'" + kv.first + "' -> '" + kv.second + "'"; })));
}

/// golden_hint's names clause: each key --golden-names suffix would rename, into `renamed`.
void suffix_hint(const std::vector<Sample>& samples, const std::set<std::string>& values,
                 const onnx::GraphProto& graph, std::map<std::string, std::string>& renamed) {
  const SuffixIndex index(values);
  for (const Sample& s : samples)
    for (const auto& [key, t] : s) {
      if (values.count(key) || renamed.count(key) || !tensorflow_name(key, values).empty() ||
          backend_output_key(key, graph))
        continue;
      if (auto found = index.matches(key); found.size() == 1) renamed.emplace(key, found.front());
    }
}

/// golden_hint's layout clause: the permutation auto would take per rank and its tensors.
std::vector<GoldenPermutation> layout_hint(const std::vector<Sample>& samples,
                                           const onnx::ModelProto& model,
                                           const std::map<std::string, std::string>& renamed,
                                           const std::set<std::string>& values) {
  std::map<std::string, Shape> golden;  // the model's name -> the golden shape
  for (const Sample& s : samples)
    for (const auto& [key, t] : s) {
      std::string name = key;
      if (auto it = renamed.find(key); it != renamed.end()) name = it->second;
      if (std::string tf = tensorflow_name(key, values); !values.count(key) && !tf.empty())
        name = tf;
      if (t.shape().size() >= 2) golden.emplace(name, t.shape());
    }
  std::set<std::string> names;
  for (const auto& [name, shape] : golden) names.insert(name);
  const std::map<std::string, Shape> shapes = model_shapes(model, names);
  std::vector<LayoutEntry> entries;
  for (const auto& [name, shape] : golden)
    if (auto it = shapes.find(name); it != shapes.end())
      entries.push_back({name, shape, &it->second});
  LayoutPlan plan;
  GoldenMatchReport unused;
  plan_auto(entries, model.graph(), plan, unused);
  std::map<size_t, GoldenPermutation> per_rank;
  for (const auto& [name, perm] : plan.perms) {
    GoldenPermutation& gp = per_rank[perm.size()];
    gp.rank = perm.size();
    gp.perm = perm;
    gp.transposed.push_back(name);
  }
  std::vector<GoldenPermutation> out;
  for (auto& [rank, gp] : per_rank) out.push_back(std::move(gp));
  return out;
}

}  // namespace

std::string golden_hint(const std::vector<Sample>& samples, const onnx::ModelProto& model,
                        const GoldenMatchOptions& used) {
  const std::set<std::string> values = model_values(model.graph());
  std::map<std::string, std::string> renamed;
  if (used.names == GoldenNames::kExact) suffix_hint(samples, values, model.graph(), renamed);
  std::vector<std::string> clauses;
  if (!renamed.empty()) {
    const std::vector<std::pair<std::string, std::string>> list(renamed.begin(), renamed.end());
    clauses.push_back(fmt::format(
        "--golden-names suffix would rename {} ({})",
        plural(list.size(), "key that ends one tensor's name",
               "keys that end one tensor's name each"),
        listed(list, [](const auto& kv) { return "'" + kv.first + "' -> '" + kv.second + "'"; })));
  }
  if (used.layout == GoldenLayout::kAsIs) {
    std::vector<std::string> ranks;
    size_t n = 0;
    for (const auto& p : layout_hint(samples, model, renamed, values)) {
      n += p.transposed.size();
      ranks.push_back(
          fmt::format("rank {} by {}: {}", p.rank, perm_text(p.perm), quoted_list(p.transposed)));
    }
    if (n > 0)
      clauses.push_back(fmt::format(
          "--golden-layout auto would transpose {} whose shape is the model's with {} axes "
          "permuted ({})",
          plural(n, "tensor", "tensors"), n == 1 ? "its" : "their", fmt::join(ranks, "; ")));
  }
  return fmt::format("{}", fmt::join(clauses, "; "));
}

Expected<GoldenMatchReport> match_golden(std::vector<Sample>& samples,
                                         const onnx::ModelProto& model,
                                         const GoldenMatchOptions& options,
                                         const std::string& what) {
  GoldenMatchReport report;
  report.options = options;
  const std::set<std::string> values = model_values(model.graph());
  std::optional<SuffixIndex> suffix;
  if (options.names == GoldenNames::kSuffix) suffix.emplace(values);
  const NameContext names{values, model.graph(), suffix ? &*suffix : nullptr, what};
  ODB_RETURN_IF_ERROR(rename_keys(samples, names, report));
  name_notes(what, report);
  if (options.layout != GoldenLayout::kAsIs) {
    ODB_RETURN_IF_ERROR(fit_layout(samples, model, values, report));
    layout_notes(what, report);
  }
  return report;
}

}  // namespace onnxdbg
