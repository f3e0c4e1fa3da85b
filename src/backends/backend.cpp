// Backend specs ("onnxruntime:opt=disabled:threads=1"), the list of backends with their options,
// and the factory that picks in-process or isolated execution.
#include "backends/backend.h"

#include <sys/resource.h>

#include <string_view>

#include "backends/isolated.h"

namespace onnxdbg {

Expected<BackendSpec> BackendSpec::parse(const std::string& text) {
  BackendSpec s;
  size_t pos = text.find(':');
  s.name = text.substr(0, pos);
  if (s.name.empty()) return invalid_argument("empty backend name in '" + text + "'");
  while (pos != std::string::npos) {
    const size_t next = text.find(':', pos + 1);
    const std::string kv =
        text.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument("backend option '" + kv + "' in '" + text +
                              "' is not KEY=VALUE (e.g. onnxruntime:opt=disabled)");
    s.options[kv.substr(0, eq)] = kv.substr(eq + 1);
    pos = next;
  }
  return s;
}

Expected<ValueRunResult> Session::run_values(const ValueMap& inputs) {
  TensorMap tensors;
  for (const auto& [name, v] : inputs) {
    if (!v.is_tensor())
      return unsupported("input '" + name + "' is " + v.kind_name() +
                         "; this backend exchanges tensors only");
    tensors.emplace(name, v.tensor());
  }
  ODB_ASSIGN_OR_RETURN(SessionRunResult r, run(tensors));
  ValueRunResult out;
  out.run_seconds = r.run_seconds;
  for (auto& [name, t] : r.outputs) out.outputs.emplace(name, std::move(t));
  return out;
}

Expected<SessionRunResult> Session::run_each(const TensorMap& inputs,
                                             const std::vector<std::string>& observe,
                                             const TensorSink& sink) {
  ODB_ASSIGN_OR_RETURN(SessionRunResult r,
                       observe.empty() ? run(inputs) : run_observing(inputs, observe));
  // The observed tensors in the order asked for, then the graph outputs in the graph's order (the
  // layerwise pass merges them in topological order with the golden values, and asks for its
  // tensors as graph outputs in that order), then anything else.
  for (const auto& name : observe) {
    auto node = r.outputs.extract(name);
    if (!node.empty()) sink(node.key(), std::move(node.mapped()));
  }
  for (const auto& name : info().output_names) {
    auto node = r.outputs.extract(name);
    if (!node.empty()) sink(node.key(), std::move(node.mapped()));
  }
  while (!r.outputs.empty()) {
    auto node = r.outputs.extract(r.outputs.begin());
    sink(node.key(), std::move(node.mapped()));
  }
  return r;
}

Status deferred_load_failure(Status st, const std::string& detail) {
  return std::move(st).with_context(kDeferredLoadContext + detail);
}

bool is_deferred_load_failure(const Status& st) {
  const std::string_view mark = kDeferredLoadContext;
  for (const auto& line : st.context())
    if (line.compare(0, mark.size(), mark) == 0) return true;
  return false;
}

std::string BackendSpec::to_string() const {
  std::string s = name;
  for (const auto& [k, v] : options) s += ":" + k + "=" + v;
  return s;
}

std::string BackendSpec::option(const std::string& key, const std::string& def) const {
  auto it = options.find(key);
  return it == options.end() ? def : it->second;
}

int64_t peak_rss_bytes() {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

namespace {

/// A backend's documentation with `isolated` as backends.def says.
BackendDoc with_isolation(BackendDoc doc, bool isolated) {
  doc.isolated = isolated;
  return doc;
}

}  // namespace

const std::vector<BackendDoc>& backend_docs() {
  static const std::vector<BackendDoc> docs = {
#define ONNXDBG_IN_PROCESS_BACKEND(name, factory) with_isolation(name##_backend_doc(), false),
#define ONNXDBG_ISOLATED_BACKEND(name, factory) with_isolation(name##_backend_doc(), true),
#include "backends/backends.def"
#undef ONNXDBG_IN_PROCESS_BACKEND
#undef ONNXDBG_ISOLATED_BACKEND
  };
  return docs;
}

bool BackendDoc::has_option(const std::string& key) const {
  for (const auto& o : options)
    if (o.key == key) return true;
  return false;
}

const BackendDoc* find_backend_doc(const std::string& name) {
  for (const auto& d : backend_docs())
    if (d.name == name) return &d;
  return nullptr;
}

bool backend_has_option(const std::string& name, const std::string& key) {
  const BackendDoc* doc = find_backend_doc(name);
  return doc && doc->has_option(key);
}

const BackendTraits& backend_traits(const std::string& name) {
  static const BackendTraits none;
  const BackendDoc* doc = find_backend_doc(name);
  return doc ? doc->traits : none;
}

bool is_isolated_backend(const std::string& name) {
#define ONNXDBG_IN_PROCESS_BACKEND(n, factory)
#define ONNXDBG_ISOLATED_BACKEND(n, factory) \
  if (name == #n) return true;
#include "backends/backends.def"
#undef ONNXDBG_IN_PROCESS_BACKEND
#undef ONNXDBG_ISOLATED_BACKEND
  return false;
}

Status validate_backend_spec(const BackendSpec& spec) {
  const BackendDoc* doc = find_backend_doc(spec.name);
  if (!doc) {
    std::string names;
    for (const auto& d : backend_docs()) names += (names.empty() ? "" : ", ") + d.name;
    return invalid_argument("unknown backend '" + spec.name + "' (available: " + names + ")");
  }
  for (const auto& [key, value] : spec.options) {
    // precision=fp16 is handled before the backend sees the model (comparator/precision.h).
    if (key == "precision") {
      if (value != "fp32" && value != "fp16")
        return invalid_argument("backend " + spec.name + ": precision must be fp32 or fp16, not '" +
                                value + "'");
      continue;
    }
    // debug_crash/debug_hang are test hooks of the worker, accepted on isolated backends only.
    if (doc->isolated && (key == "debug_crash" || key == "debug_abort" || key == "debug_hang"))
      continue;
    bool known = false;
    std::string keys;
    for (const auto& o : doc->options) {
      keys += (keys.empty() ? "" : ", ") + o.key;
      known = known || o.key == key;
      // "config.KEY" documents a family of keys (onnxruntime's session config entries).
      if (o.key.size() > 4 && o.key.compare(o.key.size() - 4, 4, ".KEY") == 0)
        known = known || key.rfind(o.key.substr(0, o.key.size() - 3), 0) == 0;
    }
    if (!known)
      return invalid_argument(
          "backend " + spec.name + " has no option '" + key + "'" +
          (keys.empty() ? std::string(" (it takes none)") : " (options: " + keys + ")"));
    if (key == "providers") {
      auto list = parse_provider_list(value);
      if (!list) return invalid_argument(spec.name + ": " + list.status().message());
    }
  }
  return Status::ok();
}

Expected<std::vector<BackendSpec>> parse_backend_list(const std::string& list) {
  std::vector<BackendSpec> out;
  std::string last_key;  // the option written last in the previous backend item
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = list.find(',', pos);
    const std::string item =
        list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const std::string name = item.substr(0, item.find(':'));
    const bool is_backend = find_backend_doc(name) != nullptr;
    if (!item.empty() && !is_backend && item.find(':') == std::string::npos &&
        last_key == "providers") {
      // "onnxruntime:providers=cuda,cpu": 'cpu' names no backend, so it continues the provider
      // list written last. Only list-valued options continue: "threads=1,bogus" stays an error
      // about an unknown backend, not a strange thread count.
      out.back().options[last_key] += "," + item;
    } else if (!item.empty()) {
      ODB_ASSIGN_OR_RETURN(BackendSpec spec, BackendSpec::parse(item));
      const size_t colon = item.rfind(':');
      last_key = colon == std::string::npos
                     ? ""
                     : item.substr(colon + 1, item.find('=', colon) - colon - 1);
      out.push_back(std::move(spec));
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  for (const auto& spec : out) ODB_RETURN_IF_ERROR(validate_backend_spec(spec));
  if (out.empty()) return invalid_argument("--backends lists no backend");
  return out;
}

// Each in-process backend's factory, defined in src/backends/<name>/<name>_backend.cpp.
#define ONNXDBG_IN_PROCESS_BACKEND(name, factory) \
  std::unique_ptr<Backend> factory(const BackendSpec& spec);
#define ONNXDBG_ISOLATED_BACKEND(name, factory)
#include "backends/backends.def"
#undef ONNXDBG_IN_PROCESS_BACKEND
#undef ONNXDBG_ISOLATED_BACKEND

Expected<std::unique_ptr<Backend>> create_backend(const BackendSpec& spec) {
  ODB_RETURN_IF_ERROR(validate_backend_spec(spec));
#define ONNXDBG_IN_PROCESS_BACKEND(n, factory) \
  if (spec.name == #n) return factory(spec);
#define ONNXDBG_ISOLATED_BACKEND(name, factory)
#include "backends/backends.def"
#undef ONNXDBG_IN_PROCESS_BACKEND
#undef ONNXDBG_ISOLATED_BACKEND
  IsolationOptions iso;
  if (auto t = spec.option("timeout"); !t.empty()) {
    char* end = nullptr;
    const double s = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || *end || !(s > 0))
      return invalid_argument("backend option timeout=" + t +
                              " is not a positive number of seconds");
    iso.load_timeout_seconds = iso.run_timeout_seconds = s;
  }
  return make_isolated_backend(spec, iso);
}

}  // namespace onnxdbg
