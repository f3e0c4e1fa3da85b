// Loading, checking, merging and saving samples of model data (see samples.h).
#include "data/samples.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "core/atomic_file.h"
#include "data/npz.h"
#include "data/test_data.h"
#include "model/graph.h"
#include "model/model.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

/// test_data_set_N folders directly in `dir`, ordered by N.
std::vector<fs::path> test_data_sets(const fs::path& dir) {
  std::vector<std::pair<long, fs::path>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::string prefix = "test_data_set_";
    if (!e.is_directory(ec) || name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    found.emplace_back(std::stol(digits), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  out.reserve(found.size());
  for (auto& [n, p] : found) out.push_back(std::move(p));
  return out;
}

/// A graph whose inputs are `graph`'s outputs, so load_tensors names an unnamed single tensor
/// after the model's only output.
onnx::GraphProto outputs_as_inputs(const onnx::GraphProto& graph) {
  onnx::GraphProto g;
  for (const auto& o : graph.output()) *g.add_input() = o;
  return g;
}

std::string names_of(const std::vector<ValueSignature>& sigs) {
  std::vector<std::string> names;
  names.reserve(sigs.size());
  for (const auto& s : sigs) names.push_back(s.name);
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

/// Element type and static dims of `t` against a declared graph input/output.
Status check_signature(const Tensor& t, const ValueSignature& sig, const std::string& what,
                       const char* kind) {
  if (sig.dtype != DType::kUndefined && t.dtype() != sig.dtype) {
    return invalid_argument(fmt::format(
        "{} holds '{}' as {}, but the model's {} '{}' is {}; was it saved from another model?",
        what, sig.name, dtype_name(t.dtype()), kind, sig.name, dtype_name(sig.dtype)));
  }
  if (!sig.has_shape) return Status::ok();
  bool fits = sig.shape.size() == t.shape().size();
  for (size_t d = 0; fits && d < sig.shape.size(); ++d)
    fits = sig.shape[d] < 0 || sig.shape[d] == t.shape()[d];
  if (!fits) {
    std::vector<std::string> dims;
    for (size_t d = 0; d < sig.shape.size(); ++d)
      dims.push_back(sig.shape[d] >= 0 ? std::to_string(sig.shape[d])
                                       : (sig.dim_params[d].empty() ? "?" : sig.dim_params[d]));
    return invalid_argument(fmt::format(
        "{} holds '{}' with shape [{}], but the model's {} '{}' has shape [{}]; was it saved from "
        "another model?",
        what, sig.name, shape_to_string(t.shape()), kind, sig.name, fmt::join(dims, "x")));
  }
  return Status::ok();
}

/// Reads one data path without a model (for merging): names must come from the data itself.
Expected<std::vector<std::vector<Sample>>> read_for_merge(const fs::path& path) {
  const std::string what = "'" + path.string() + "'";
  std::error_code ec;
  if (!fs::exists(path, ec)) return not_found("data file " + what + " does not exist");
  const onnx::GraphProto none;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> sets = test_data_sets(path);
    if (sets.empty()) sets.push_back(path);
    std::vector<Sample> samples;
    for (const auto& set : sets) {
      Sample s;
      bool any = false;
      auto in = load_test_data_inputs(set, none);
      if (in) {
        s.merge(*in);
        any = true;
      } else if (in.status().code() != ErrorCode::kNotFound) {
        return in.status();
      }
      auto out = load_test_data_outputs(set, none);
      if (out) {
        s.merge(*out);
        any = true;
      } else if (out.status().code() != ErrorCode::kNotFound) {
        return out.status();
      }
      if (!any)
        return invalid_argument("'" + set.string() + "' holds no input_K.pb or output_K.pb files");
      samples.push_back(std::move(s));
    }
    return std::vector<std::vector<Sample>>{std::move(samples)};
  }
  const std::string ext = path.extension().string();
  if (ext == ".json") {
    ODB_ASSIGN_OR_RETURN(PolygraphyData data, load_polygraphy_json(path));
    std::vector<std::vector<Sample>> out;
    for (auto& [runner, iterations] : data.runs) out.push_back(std::move(iterations));
    return out;
  }
  if (ext == ".npz") {
    ODB_ASSIGN_OR_RETURN(Sample s, load_npz(path));
    return std::vector<std::vector<Sample>>{{std::move(s)}};
  }
  if (ext == ".pb") {
    ODB_ASSIGN_OR_RETURN(Sample s, load_tensors(path, none));
    return std::vector<std::vector<Sample>>{{std::move(s)}};
  }
  return invalid_argument(what +
                          " is not a known data format (expected .json, .npz, a named .pb "
                          "or a test_data_set folder)");
}

}  // namespace

Expected<LoadedSamples> load_samples(const fs::path& path, const onnx::GraphProto& graph,
                                     DataRole role) {
  const bool inputs = role == DataRole::kInputs;
  const std::string what = "'" + path.string() + "'";
  std::error_code ec;
  if (!fs::exists(path, ec))
    return not_found((inputs ? "input data " : "output data ") + what + " does not exist");
  LoadedSamples out;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> sets = test_data_sets(path);
    if (sets.empty()) sets.push_back(path);
    for (const auto& set : sets) {
      ODB_ASSIGN_OR_RETURN(Sample s, inputs ? load_test_data_inputs(set, graph)
                                            : load_test_data_outputs(set, graph));
      out.samples.push_back(std::move(s));
    }
    if (sets.size() > 1 || sets.front() != path)
      out.note = fmt::format("{} test_data_set folders in {}", sets.size(), what);
    return out;
  }
  const std::string ext = path.extension().string();
  if (ext == ".json") {
    ODB_ASSIGN_OR_RETURN(PolygraphyData data, load_polygraphy_json(path));
    if (data.kind == PolygraphyData::Kind::kRunResults) {
      if (inputs)
        return invalid_argument(
            what +
            " holds Polygraphy RunResults (outputs of a run); give it to --load-outputs, "
            "or merge it with inputs using `onnxdbg data to-input`");
      if (data.runs.size() > 1)
        out.note = fmt::format("{} holds RunResults of {} runners; using the first, '{}'", what,
                               data.runs.size(), data.runs.front().first);
    }
    out.samples = std::move(data.runs.front().second);
    if (out.samples.empty()) return invalid_argument(what + " holds no iterations");
    return out;
  }
  if (inputs) {
    ODB_ASSIGN_OR_RETURN(Sample s, load_tensors(path, graph));
    out.samples.push_back(std::move(s));
    return out;
  }
  if (ext == ".npz" || ext == ".npy" || ext == ".pb") {
    ODB_ASSIGN_OR_RETURN(Sample s, load_tensors(path, outputs_as_inputs(graph)));
    out.samples.push_back(std::move(s));
    return out;
  }
  return invalid_argument(what +
                          " is not a known output data format (expected .npz, .json, "
                          ".npy, .pb, or a test_data_set folder of output_K.pb files)");
}

namespace {

const ValueSignature* find_signature(const std::vector<ValueSignature>& sigs,
                                     const std::string& name) {
  auto it = std::find_if(sigs.begin(), sigs.end(), [&](const auto& s) { return s.name == name; });
  return it == sigs.end() ? nullptr : &*it;
}

// An input sample: names that are not inputs (a file merged from inputs and layerwise outputs,
// say) are dropped into `extra`, as Polygraphy drops them, once every input is there; with an
// input missing the first such name is the likelier clue: the data of another model.
Status check_input_sample(Sample& s, const std::vector<ValueSignature>& ins,
                          const std::string& where, std::vector<std::string>& extra) {
  const bool complete = std::all_of(ins.begin(), ins.end(),
                                    [&](const ValueSignature& sig) { return s.count(sig.name); });
  for (auto it = s.begin(); it != s.end();) {
    const ValueSignature* sig = find_signature(ins, it->first);
    if (!sig && complete) {
      if (std::find(extra.begin(), extra.end(), it->first) == extra.end())
        extra.push_back(it->first);
      it = s.erase(it);
      continue;
    }
    if (!sig)
      return invalid_argument(fmt::format(
          "{} holds '{}', which is not an input of the model (its inputs: {}); was it saved "
          "from another model?",
          where, it->first, names_of(ins)));
    ODB_RETURN_IF_ERROR(check_signature(it->second, *sig, where, "input"));
    ++it;
  }
  for (const auto& sig : ins) {
    if (s.count(sig.name)) continue;
    std::vector<std::string> held;
    for (const auto& [name, t] : s) held.push_back(name);
    return invalid_argument(fmt::format(
        "{} lacks the model's input '{}' (it holds: {})", where, sig.name,
        held.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(held, ", "))));
  }
  return Status::ok();
}

// TensorFlow's names: a key that is no value of the model but is one with ":0" added or removed
// takes the model's name (a dump of TensorFlow tensors loads as it is). A key whose new name is
// already held keeps its own, and is refused below if it names nothing.
void take_tensorflow_names(Sample& s, const std::set<std::string>& values) {
  Sample renamed;
  for (auto& [key, t] : s) {
    std::string name = key;
    if (!values.count(key)) {
      if (key.size() > 2 && key.ends_with(":0") && values.count(key.substr(0, key.size() - 2)))
        name = key.substr(0, key.size() - 2);
      else if (values.count(key + ":0"))
        name = key + ":0";
      if (s.count(name)) name = key;
    }
    renamed.emplace(std::move(name), std::move(t));
  }
  s = std::move(renamed);
}

// An output sample: other backends' outputs saved as BACKEND/NAME are dropped, then every name
// must be a value of the model (`values`) and one at least a graph output.
Status check_output_sample(Sample& s, const std::vector<ValueSignature>& ins,
                           const std::vector<ValueSignature>& outs,
                           const std::set<std::string>& values, const std::string& where) {
  take_tensorflow_names(s, values);
  std::erase_if(s, [&](const auto& kv) {
    const size_t slash = kv.first.rfind('/');
    return !values.count(kv.first) && slash != std::string::npos &&
           find_signature(outs, kv.first.substr(slash + 1)) != nullptr;
  });
  int graph_outputs = 0;
  for (const auto& [name, t] : s) {
    if (!values.count(name))
      return invalid_argument(fmt::format(
          "{} holds '{}', which is not a tensor of the model (its outputs: {}); was it saved "
          "from another model?",
          where, name, names_of(outs)));
    if (const ValueSignature* sig = find_signature(outs, name)) {
      ODB_RETURN_IF_ERROR(check_signature(t, *sig, where, "output"));
      ++graph_outputs;
    } else if (const ValueSignature* isig = find_signature(ins, name)) {
      ODB_RETURN_IF_ERROR(check_signature(t, *isig, where, "input"));
    }
  }
  if (graph_outputs == 0)
    return invalid_argument(
        fmt::format("{} holds none of the model's outputs ({})", where, names_of(outs)));
  return Status::ok();
}

}  // namespace

std::set<std::string> model_values(const onnx::GraphProto& graph) {
  std::set<std::string> values;
  walk_graphs(graph, [&](const GraphVisit& v) {
    for (const auto& i : v.graph->input()) values.insert(i.name());
    for (const auto& i : v.graph->initializer()) values.insert(i.name());
    for (const auto& n : v.graph->node())
      for (const auto& o : n.output())
        if (!o.empty()) values.insert(o);
  });
  return values;
}

Status check_samples(std::vector<Sample>& samples, const onnx::GraphProto& graph, DataRole role,
                     const std::string& what, std::string* note) {
  const auto ins = model_inputs(graph);
  const auto outs = model_outputs(graph);
  const std::set<std::string> values = model_values(graph);
  std::vector<std::string> extra;  // kInputs: names dropped, in order of first appearance
  for (size_t k = 0; k < samples.size(); ++k) {
    const std::string where = samples.size() > 1 ? fmt::format("{} sample {}", what, k) : what;
    ODB_RETURN_IF_ERROR(role == DataRole::kInputs
                            ? check_input_sample(samples[k], ins, where, extra)
                            : check_output_sample(samples[k], ins, outs, values, where));
  }
  if (note && !extra.empty()) {
    constexpr size_t kShown = 8;
    std::vector<std::string> shown;
    for (size_t i = 0; i < extra.size() && i < kShown; ++i) shown.push_back("'" + extra[i] + "'");
    *note = fmt::format(
        "{} also holds {} tensor{} that {} not {} of the model: {}{}; ignored, as "
        "Polygraphy ignores them",
        what, extra.size(), extra.size() == 1 ? "" : "s", extra.size() == 1 ? "is" : "are",
        extra.size() == 1 ? "an input" : "inputs", fmt::join(shown, ", "),
        extra.size() > kShown ? fmt::format(" and {} more", extra.size() - kShown) : std::string());
  }
  return Status::ok();
}

Expected<std::vector<Sample>> merge_sample_files(const std::vector<fs::path>& paths) {
  std::vector<Sample> merged;
  std::string first;
  for (const auto& path : paths) {
    ODB_ASSIGN_OR_RETURN(auto groups, read_for_merge(path));
    for (auto& samples : groups) {
      if (!first.empty() && samples.size() != merged.size())
        return invalid_argument(fmt::format(
            "'{}' holds {} sample{} but '{}' holds {}; merged samples would be incomplete",
            path.string(), samples.size(), samples.size() == 1 ? "" : "s", first, merged.size()));
      if (first.empty()) {
        first = path.string();
        merged.resize(samples.size());
      }
      for (size_t k = 0; k < samples.size(); ++k)
        for (auto& [name, t] : samples[k]) merged[k].insert_or_assign(name, std::move(t));
    }
  }
  if (merged.empty()) return invalid_argument("no data to merge");
  return merged;
}

Status save_samples(const fs::path& path, const std::vector<Sample>& samples) {
  const std::string ext = path.extension().string();
  const std::string what = "'" + path.string() + "'";
  if (ext == ".npz") {
    if (samples.size() != 1)
      return invalid_argument(fmt::format(
          "{} samples do not fit one .npz file; write a Polygraphy .json instead", samples.size()));
    return save_npz(path, samples.front());
  }
  if (ext != ".json") return invalid_argument(what + ": the output must be a .npz or .json file");
  const std::string text = polygraphy_inputs_json(samples);
  return write_file_atomic(path, text);
}

}  // namespace onnxdbg
