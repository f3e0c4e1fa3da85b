// onnxdbg._core: the pybind11 binding of onnxdbg's public C++ API (include/onnxdbg/). Thin: each
// function fills the API's options struct from its arguments (lists and tolerances as the CLI
// writes them, parsed by the CLI's own parsers so the errors read the same), calls the API
// through call_library (GIL released, Ctrl-C cancels) and hands back the result object, whose
// renderings (JSON, text, HTML) are the API's. The Python package (python/onnxdbg/) gives it
// Python's shapes: keyword arguments, numpy arrays, exceptions, result classes.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <sstream>

#include "arrays.h"
#include "call.h"
#include "core/run_limits.h"
#include "onnxdbg/onnxdbg.h"

namespace py = pybind11;

namespace onnxdbg::python {
namespace {

struct ErrorTypes {
  py::object base, model, usage, not_found, unsupported, backend, cancelled;
};
ErrorTypes& error_types() {
  static ErrorTypes* t = new ErrorTypes();  // lives as long as the interpreter
  return *t;
}

/// --atol/--rtol texts applied to `spec` (parse_tolerance_args); UsageError when malformed.
void set_tolerance(ToleranceSpec& spec, const std::vector<std::string>& atol,
                   const std::vector<std::string>& rtol) {
  if (Status st = parse_tolerance_args(atol, rtol, spec); !st) raise_status(st);
}

std::vector<BackendSpec> backends(const std::string& list) {
  return value_or_raise(parse_backend_list(list));
}

/// The one backend `argument` names; UsageError for a list of several.
BackendSpec one_backend(const char* argument, const std::string& text) {
  std::vector<BackendSpec> specs = backends(text);
  if (specs.size() != 1)
    raise_status(
        invalid_argument(std::string(argument) + " takes one backend, not '" + text + "'"));
  return specs.front();
}

InputGenOptions generation(uint64_t seed, const std::vector<std::string>& shapes,
                           const std::vector<std::string>& ranges) {
  InputGenOptions g;
  g.seed = seed;
  if (Status st = parse_input_shapes(shapes, g.shapes); !st) raise_status(st);
  if (Status st = parse_value_ranges(ranges, g); !st) raise_status(st);
  return g;
}

std::vector<TensorMap> samples(const py::list& dicts) {
  std::vector<TensorMap> out;
  for (const auto& d : dicts) out.push_back(to_tensor_map(d.cast<py::dict>()));
  return out;
}

py::list messages(const api::Messages& m) {
  py::list out;
  for (const auto& msg : m)
    out.append(
        py::make_tuple(msg.kind == api::Message::Kind::kWarning ? "warning" : "note", msg.text));
  return out;
}

template <class R>
std::string text_of(const R& r) {
  std::ostringstream os;
  api::print_text(r, os);
  return os.str();
}
template <class R>
std::string colored_text_of(const R& r, bool color) {
  std::ostringstream os;
  api::print_text(r, os, color);
  return os.str();
}

py::dict signature(const ValueSignature& s) {
  py::dict d;
  d["name"] = s.name;
  d["dtype"] = std::string(dtype_name(s.dtype));
  d["type"] = s.type_string;
  if (s.has_shape) {
    py::list shape;
    for (size_t i = 0; i < s.shape.size(); ++i) {
      const std::string param = i < s.dim_params.size() ? s.dim_params[i] : "";
      if (!param.empty())
        shape.append(param);
      else if (s.shape[i] < 0)
        shape.append(py::none());
      else
        shape.append(s.shape[i]);
    }
    d["shape"] = py::tuple(shape);
  } else {
    d["shape"] = py::none();
  }
  return d;
}

/// What onnxdbg.Model shows: signatures, opsets, nodes of the main graph (Model::info).
py::dict model_info(const std::string& path) {
  const ModelInfo m = value_or_raise(Model::load(path)).info();
  py::dict d;
  py::list inputs, outputs, nodes;
  for (const auto& s : m.inputs) inputs.append(signature(s));
  for (const auto& s : m.outputs) outputs.append(signature(s));
  for (const auto& n : m.nodes) {
    py::dict nd;
    nd["name"] = n.name;
    nd["op_type"] = n.op_type;
    nd["domain"] = n.domain;
    nd["inputs"] = n.inputs;
    nd["outputs"] = n.outputs;
    nd["metadata"] = n.metadata;
    nodes.append(nd);
  }
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  d["nodes"] = nodes;
  d["opsets"] = m.opsets;
  d["ir_version"] = m.ir_version;
  d["producer"] = m.producer;
  d["warnings"] = m.warnings;
  return d;
}

py::dict run_backend(const std::string& model, const std::string& backend, const py::object& inputs,
                     uint64_t seed, const std::vector<std::string>& shapes,
                     const std::vector<std::string>& ranges, bool intermediates,
                     uint64_t memory_budget, const py::object& progress) {
  api::BackendRunOptions o;
  o.model = model;
  o.backend = value_or_raise(BackendSpec::parse(backend));
  if (!inputs.is_none()) o.inputs = to_tensor_map(inputs.cast<py::dict>());
  o.generate = generation(seed, shapes, ranges);
  o.intermediates = intermediates;
  o.memory_budget = memory_budget;
  api::BackendRunResult r =
      call_library([&](const api::CallContext& ctx) { return api::run_backend(o, ctx); }, progress);
  py::dict d;
  // Given inputs come back as the caller's own arrays (the result only borrowed them).
  d["inputs"] = inputs.is_none() ? py::object(to_dict(std::move(r.inputs))) : inputs;
  r.inputs.clear();
  d["outputs"] = to_dict(std::move(r.outputs));
  d["intermediates"] = to_dict(std::move(r.intermediates));
  d["backend"] = r.backend;
  d["describe"] = r.describe;
  d["providers"] = r.providers;
  d["load_seconds"] = r.load_seconds;
  d["run_seconds"] = r.run_seconds;
  d["messages"] = messages(r.messages);
  return d;
}

/// How one keyword argument of onnxdbg.compare or onnxdbg.reduce (its options.def Python name;
/// "samples" and "golden_samples" carry arrays) sets the API's options struct O. Values arrive as
/// python/onnxdbg/__init__.py normalizes them: lists of the CLI's texts for tolerances, shapes and
/// ranges (parsed by the CLI's parsers, so the errors read the same), sizes as integers.
template <class O>
using Setters = std::map<std::string, std::function<void(O&, const py::handle&)>>;

/// Every keyword of `options` applied to `o`; None keeps the struct's default (options.def's).
/// Errors: UsageError for a keyword `setters` lacks (a binding behind its Python function).
template <class O>
void apply_options(O& o, const py::dict& options, const Setters<O>& setters, const char* fn) {
  for (const auto& [k, v] : options) {
    const std::string key = py::str(k);
    auto it = setters.find(key);
    if (it == setters.end())
      raise_status(invalid_argument(std::string(fn) + "() got an unexpected keyword argument '" +
                                    key + "'"));
    if (!v.is_none()) it->second(o, v);
  }
}

std::vector<std::string> texts(const py::handle& v) { return v.cast<std::vector<std::string>>(); }

/// The inputs group (options.def) of an options struct whose `inputs` is api::InputOptions
/// (run's, bisect-optimizers'), plus "samples": the given arrays.
template <class O>
void add_input_setters(Setters<O>& s) {
  s["samples"] = [](O& o, auto v) { o.inputs.samples = samples(v.template cast<py::list>()); };
  s["inputs"] = [](O& o, auto v) { o.inputs.load_inputs = v.template cast<std::string>(); };
  s["iterations"] = [](O& o, auto v) { o.inputs.iterations = v.template cast<int>(); };
  s["sample"] = [](O& o, auto v) { o.inputs.sample = v.template cast<size_t>(); };
  s["seed"] = [](O& o, auto v) { o.inputs.generate.seed = v.template cast<uint64_t>(); };
  s["input_shapes"] = [](O& o, auto v) {
    if (Status st = parse_input_shapes(texts(v), o.inputs.generate.shapes); !st) raise_status(st);
  };
  s["val_range"] = [](O& o, auto v) {
    if (Status st = parse_value_ranges(texts(v), o.inputs.generate); !st) raise_status(st);
  };
}

/// The comparison group (options.def) applied to `tolerance` and `error_stat` of the struct
/// `group` picks (run's `comparison`, reduce's `builtin`).
template <class O, class Group>
void add_tolerance_setters(Setters<O>& s, Group& (*group)(O&)) {
  s["atol"] = [group](O& o, auto v) { set_tolerance(group(o).tolerance, texts(v), {}); };
  s["rtol"] = [group](O& o, auto v) { set_tolerance(group(o).tolerance, {}, texts(v)); };
  s["error_stat"] = [group](O& o, auto v) {
    group(o).error_stat = value_or_raise(error_stat_from_name(v.template cast<std::string>()));
  };
}

/// The rest of the comparison group of an options struct whose `comparison` is
/// api::ComparisonOptions: golden values (a file, or "golden_samples": the given arrays), how
/// their keys and axes fit the model (golden_names, golden_layout), and --validate.
template <class O>
void add_comparison_setters(Setters<O>& s) {
  add_tolerance_setters<O, api::ComparisonOptions>(
      s, [](O& o) -> api::ComparisonOptions& { return o.comparison; });
  s["golden_samples"] = [](O& o, auto v) {
    o.comparison.golden = samples(v.template cast<py::list>());
  };
  s["golden"] = [](O& o, auto v) { o.comparison.load_outputs = v.template cast<std::string>(); };
  s["golden_names"] = [](O& o, auto v) {
    o.comparison.golden_names =
        value_or_raise(golden_names_from_name(v.template cast<std::string>(), "golden_names"));
  };
  s["golden_layout"] = [](O& o, auto v) {
    o.comparison.golden_layout =
        value_or_raise(golden_layout_from_name(v.template cast<std::string>(), "golden_layout"));
  };
  s["validate"] = [](O& o, auto v) { o.comparison.validate = v.template cast<bool>(); };
}

/// The limits group (options.def): --timeout, --max-memory, --max-iterations, which run, reduce
/// and bisect-optimizers hold under the same names.
template <class O>
void add_limit_setters(Setters<O>& s) {
  s["timeout"] = [](O& o, auto v) { o.timeout_seconds = v.template cast<double>(); };
  s["max_memory"] = [](O& o, auto v) { o.max_memory = v.template cast<uint64_t>(); };
  s["max_iterations"] = [](O& o, auto v) { o.max_iterations = v.template cast<uint64_t>(); };
}

/// The keywords of onnxdbg.compare: options.def's groups inputs, comparison, backends, limits,
/// layerwise and run, plus the arrays.
const Setters<api::RunOptions>& run_setters() {
  using O = api::RunOptions;
  static const Setters<O> s = [] {
    Setters<O> s = {
        {"backends", [](O& o, auto v) { o.backends = backends(v.template cast<std::string>()); }},
        {"layerwise", [](O& o, auto v) { o.layerwise.enabled = v.template cast<bool>(); }},
        {"isolate", [](O& o, auto v) { o.layerwise.isolate = v.template cast<bool>(); }},
        {"memory_budget",
         [](O& o, auto v) { o.layerwise.memory_budget = v.template cast<uint64_t>(); }},
        {"save_repro",
         [](O& o, auto v) { o.layerwise.save_repro = v.template cast<std::string>(); }},
        {"reference_accumulate",
         [](O& o, auto v) { o.reference_accumulate = v.template cast<std::string>(); }},
        {"strict_providers", [](O& o, auto v) { o.strict_providers = v.template cast<bool>(); }},
        {"save_inputs", [](O& o, auto v) { o.save_inputs = v.template cast<std::string>(); }},
        {"save_outputs", [](O& o, auto v) { o.save_outputs = v.template cast<std::string>(); }},
    };
    add_input_setters(s);
    add_comparison_setters(s);
    add_limit_setters(s);
    return s;
  }();
  return s;
}

api::RunResult compare_backends(const std::string& model, const py::dict& options,
                                const py::object& progress) {
  api::RunOptions o;
  o.model = model;
  apply_options(o, options, run_setters(), "compare");
  return call_library([&](const api::CallContext& ctx) { return api::run(o, ctx); }, progress);
}

/// reduce's built-in oracle from `fail_on` (a list of names), and the caller's Python callable.
void set_oracle(api::ReduceOptions& o, const py::object& oracle) {
  // The caller's Python callable, asked from the library's thread with the GIL taken: the
  // candidate's serialized model in, truthiness out (True: it still fails). The library copies
  // the std::function on its own threads, so the callable sits behind a shared_ptr: a copy
  // touches no Python reference count, and the last owner lets go of it with the GIL held
  // (pybind11's GIL assertion, on in PyPI's builds, caught the bare py::object; issue 37).
  struct Held {
    py::object fn;
    ~Held() {
      py::gil_scoped_acquire gil;
      fn = py::object();
    }
  };
  auto held = std::make_shared<Held>();
  held->fn = oracle;  // the calling thread, GIL held
  o.oracle = [held](const api::OracleCandidate& c) -> Expected<bool> {
    py::gil_scoped_acquire gil;
    try {
      return py::bool_(held->fn(py::bytes(c.bytes.data(), c.bytes.size()))).cast<bool>();
    } catch (py::error_already_set& e) {
      return invalid_argument("the oracle raised " + std::string(e.what()));
    }
  };
  o.oracle_description = "Python callable";
}

/// The keywords of onnxdbg.reduce: options.def's groups inputs, comparison, backends, limits and
/// reduce (the oracle callable and the output path aside).
const Setters<api::ReduceOptions>& reduce_setters() {
  using O = api::ReduceOptions;
  static const Setters<O> s = [] {
    Setters<O> s = {
        {"fail_on",
         [](O& o, auto v) {
           for (const auto& f : texts(v))
             o.builtin.fail_on.insert(value_or_raise(reduce::fail_on_from_name(f)));
         }},
        {"backends",
         [](O& o, auto v) { o.builtin.backends = backends(v.template cast<std::string>()); }},
        {"fail_regex", [](O& o, auto v) { o.builtin.fail_regex = texts(v); }},
        {"mode", [](O& o, auto v) { o.mode = v.template cast<std::string>(); }},
        {"strategies", [](O& o, auto v) { o.strategies = texts(v); }},
        {"inputs", [](O& o, auto v) { o.load_inputs = v.template cast<std::string>(); }},
        {"iterations", [](O& o, auto v) { o.iterations = v.template cast<int>(); }},
        {"seed", [](O& o, auto v) { o.generate.seed = v.template cast<uint64_t>(); }},
        // The shapes fix the model's dynamic dims before reducing (--model-input-shapes); the
        // generated values then follow them.
        {"input_shapes",
         [](O& o, auto v) {
           if (Status st = parse_input_shapes(texts(v), o.model_input_shapes); !st)
             raise_status(st);
         }},
        {"val_range",
         [](O& o, auto v) {
           if (Status st = parse_value_ranges(texts(v), o.generate); !st) raise_status(st);
         }},
        {"keep_inputs", [](O& o, auto v) { o.keep_inputs = v.template cast<bool>(); }},
        {"keep_outputs", [](O& o, auto v) { o.keep_outputs = v.template cast<bool>(); }},
        {"any_failure", [](O& o, auto v) { o.any_failure = v.template cast<bool>(); }},
        {"journal", [](O& o, auto v) { o.journal = v.template cast<std::string>(); }},
        {"jobs", [](O& o, auto v) { o.jobs = v.template cast<int>(); }},
    };
    add_tolerance_setters<O, api::BuiltinOracleOptions>(
        s, [](O& o) -> api::BuiltinOracleOptions& { return o.builtin; });
    add_limit_setters(s);
    return s;
  }();
  return s;
}

api::ReduceResult reduce_model(const std::string& model, const std::string& output,
                               const py::object& oracle, const py::dict& options,
                               const py::object& progress) {
  api::ReduceOptions o;
  o.model = model;
  o.output = output;
  apply_options(o, options, reduce_setters(), "reduce");
  if (!oracle.is_none()) set_oracle(o, oracle);
  return call_library([&](const api::CallContext& ctx) { return api::reduce(o, ctx); }, progress);
}

/// The keywords a Setters table takes, for the test that each options.def row has its keyword.
template <class O>
std::vector<std::string> keywords(const Setters<O>& setters) {
  std::vector<std::string> out;
  for (const auto& [k, setter] : setters) out.push_back(k);
  return out;
}

/// options.def's rows (onnxdbg.option_schema()).
py::list schema_rows() {
  py::list out;
  for (const auto& r : option_schema()) {
    py::dict d;
    d["group"] = std::string(r.group);
    d["id"] = std::string(r.id);
    d["type"] = std::string(r.type);
    d["cli"] = std::string(r.cli);
    d["python"] = std::string(r.python);
    d["default"] = r.default_text;
    d["python_default"] = std::string(r.python_default);
    d["polygraphy"] = std::string(r.polygraphy);
    d["unit"] = std::string(r.unit);
    d["help"] = std::string(r.help);
    out.append(d);
  }
  return out;
}

/// A result class with the renderings every result has: json() (what --json prints) and
/// messages() (the notes and warnings).
template <class R>
py::class_<R> bind_result(py::module_& m, const char* name) {
  return py::class_<R>(m, name)
      .def("json", [](const R& r) { return api::json_text(api::to_json(r), -1); })
      .def("messages", [](const R& r) { return messages(r.messages); });
}

/// The keywords of onnxdbg.bisect_optimizers: backend, against, save_models and options.def's
/// groups inputs, comparison and limits.
const Setters<api::BisectOptimizersOptions>& bisect_setters() {
  using O = api::BisectOptimizersOptions;
  static const Setters<O> s = [] {
    Setters<O> s = {
        {"backend",
         [](O& o, auto v) { o.backend = one_backend("backend", v.template cast<std::string>()); }},
        {"against",
         [](O& o, auto v) { o.against = one_backend("against", v.template cast<std::string>()); }},
        {"save_models", [](O& o, auto v) { o.save_models = v.template cast<std::string>(); }},
    };
    add_input_setters(s);
    add_comparison_setters(s);
    add_limit_setters(s);
    return s;
  }();
  return s;
}

/// onnxdbg.bisect_optimizers: the result class and the call (keywords as bisect_setters).
void bind_bisect_optimizers(py::module_& m) {
  bind_result<api::BisectOptimizersResult>(m, "BisectOptimizersResult")
      .def("text", [](const api::BisectOptimizersResult& r) { return text_of(r); });
  m.def("bisect_optimizers", [](const std::string& model, const py::dict& options,
                                const py::object& progress) {
    api::BisectOptimizersOptions o;
    o.model = model;
    apply_options(o, options, bisect_setters(), "bisect_optimizers");
    return call_library([&](const api::CallContext& ctx) { return api::bisect_optimizers(o, ctx); },
                        progress);
  });
}

}  // namespace

[[noreturn]] void raise_status(const Status& st) {
  ErrorTypes& t = error_types();
  py::object type = t.base;
  switch (st.code()) {
    case ErrorCode::kInvalidArgument:
      type = t.usage;
      break;
    case ErrorCode::kNotFound:
      type = t.not_found;
      break;
    case ErrorCode::kUnsupported:
      type = t.unsupported;
      break;
    case ErrorCode::kModelError:
      type = t.model;
      break;
    case ErrorCode::kBackendError:
      type = t.backend;
      break;
    case ErrorCode::kCancelled:
      type = t.cancelled;
      break;
    default:
      break;
  }
  PyErr_SetString(type.ptr(), st.message().c_str());
  throw py::error_already_set();
}

}  // namespace onnxdbg::python

namespace onnxdbg::python {
namespace {

// onnxdbg._core.Error and its subclasses, one per ErrorCode group (raise_status picks them).
void bind_errors(py::module_& m) {
  ErrorTypes& t = error_types();
  t.base = py::exception<std::runtime_error>(m, "Error", PyExc_Exception);
  auto sub = [&](const char* name, const py::object& base) {
    py::object type = py::reinterpret_steal<py::object>(
        PyErr_NewException((std::string("onnxdbg._core.") + name).c_str(), base.ptr(), nullptr));
    m.attr(name) = type;
    return type;
  };
  t.model = sub("ModelError", t.base);
  t.usage = sub("UsageError", t.base);
  t.not_found = sub("NotFoundError", t.usage);
  t.unsupported = sub("UnsupportedError", t.base);
  t.backend = sub("BackendError", t.base);
  t.cancelled = sub("CancelledError", t.base);
}

// compare and reduce, with their result classes.
void bind_compare_and_reduce(py::module_& m) {
  bind_result<api::RunResult>(m, "RunResult")
      .def(
          "text", [](const api::RunResult& r, bool color) { return colored_text_of(r, color); },
          py::arg("color") = false)
      .def("verdict", [](const api::RunResult& r) { return verdict_name(r.verdict()); })
      .def("write_html", [](const api::RunResult& r, const std::string& path) {
        if (Status st = api::write_html(r, path); !st) raise_status(st);
      });
  m.def("compare", &compare_backends);
  m.def("compare_keywords", [] { return keywords(run_setters()); });

  bind_result<api::ReduceResult>(m, "ReduceResult")
      .def("text", [](const api::ReduceResult& r) { return text_of(r); })
      .def("stopped",
           [](const api::ReduceResult& r) {
             return r.stopped ? std::string() : r.stopped.to_string();
           })
      .def("best_so_far", [](const api::ReduceResult& r) { return r.best_so_far; })
      .def("raise_stopped", [](const api::ReduceResult& r) { raise_status(r.stopped); })
      .def("nodes", [](const api::ReduceResult& r) { return r.nodes; });
  m.def("reduce", &reduce_model);
  m.def("reduce_keywords", [] { return keywords(reduce_setters()); });
}

// lint, inspect and diff: a model (or two) in, a rendered result out.
void bind_model_tools(py::module_& m) {
  bind_result<api::LintResult>(m, "LintResult")
      .def(
          "text", [](const api::LintResult& r, bool color) { return colored_text_of(r, color); },
          py::arg("color") = false)
      .def("has_errors", &api::LintResult::has_errors);
  m.def("lint", [](const std::string& model, const std::vector<std::string>& disabled) {
    api::LintOptions o;
    o.model = model;
    o.disabled_rules = {disabled.begin(), disabled.end()};
    return call_library([&](const api::CallContext&) { return api::lint(o); }, py::none());
  });

  bind_result<api::InspectResult>(m, "InspectResult").def("text", [](const api::InspectResult& r) {
    return text_of(r);
  });
  m.def("inspect", [](const std::string& model, const std::string& mode, bool show_tensors) {
    api::InspectOptions o;
    o.model = model;
    o.mode = mode;
    o.show_tensors = show_tensors;
    return call_library([&](const api::CallContext&) { return api::inspect(o); }, py::none());
  });

  bind_result<api::DiffResult>(m, "DiffResult").def("text", [](const api::DiffResult& r) {
    return text_of(r);
  });
  m.def("diff", [](const std::string& a, const std::string& b) {
    api::DiffOptions o;
    o.a = a;
    o.b = b;
    return call_library([&](const api::CallContext&) { return api::diff(o); }, py::none());
  });
}

// extract (the surgeon) and view: files written for the user.
void bind_surgeon_and_view(py::module_& m) {
  bind_result<api::SurgeonResult>(m, "SurgeonResult").def("text", [](const api::SurgeonResult& r) {
    return text_of(r);
  });
  m.def("extract", [](const std::string& model, const std::string& output,
                      const std::vector<std::string>& inputs,
                      const std::vector<std::string>& outputs, bool force) {
    api::SurgeonOptions o;
    o.model = model;
    o.output = output;
    o.force = force;
    api::ExtractOperation op;
    for (const auto& n : inputs) op.inputs.push_back({n, DType::kUndefined, std::nullopt});
    for (const auto& n : outputs) op.outputs.push_back({n, DType::kUndefined, std::nullopt});
    o.operation = op;
    api::SurgeonResult r =
        call_library([&](const api::CallContext&) { return api::surgeon(o); }, py::none());
    if (!r.refused) raise_status(r.refused);
    return r;
  });

  m.def("view", [](const std::string& model, const std::string& path, const std::string& report,
                   const std::string& diff, bool lint, const std::vector<std::string>& highlight) {
    api::ViewOptions o;
    o.model = model;
    if (!report.empty()) {
      auto j = nlohmann::json::parse(report, nullptr, false);
      if (j.is_discarded()) raise_status(invalid_argument("the run report is not JSON"));
      o.run_report = std::move(j);
    }
    o.diff = diff;
    o.lint = lint;
    o.highlight = highlight;
    api::ViewResult r =
        call_library([&](const api::CallContext&) { return api::view(o); }, py::none());
    if (Status st = api::write_html(r, path); !st) raise_status(st);
    return messages(r.messages);
  });
}

}  // namespace
// batch: many models x commands, each an onnxdbg process, here or on a Ray cluster.
const Setters<api::BatchOptions>& batch_setters() {
  using O = api::BatchOptions;
  static const Setters<O> s = {
      {"jobs", [](O& o, auto v) { o.jobs = v.template cast<int>(); }},
      {"timeout", [](O& o, auto v) { o.timeout = v.template cast<double>(); }},
      {"max_memory", [](O& o, auto v) { o.max_memory = v.template cast<uint64_t>(); }},
      {"executor", [](O& o, auto v) { o.executor = v.template cast<std::string>(); }},
      {"address", [](O& o, auto v) { o.address = v.template cast<std::string>(); }},
      {"rerun", [](O& o, auto v) { o.rerun = v.template cast<bool>(); }},
      {"retries", [](O& o, auto v) { o.retries = v.template cast<int>(); }},
      {"python", [](O& o, auto v) { o.python = v.template cast<std::string>(); }},
      {"onnxdbg_executable",
       [](O& o, auto v) { o.onnxdbg_executable = v.template cast<std::string>(); }},
  };
  return s;
}

void bind_batch(py::module_& m) {
  bind_result<api::BatchResult>(m, "BatchResult").def("text", [](const api::BatchResult& r) {
    return colored_text_of(r, false);
  });
  m.def("batch", [](const std::vector<std::string>& models,
                    const std::vector<std::string>& commands, const std::string& report_dir,
                    const py::dict& options, const py::object& progress) {
    api::BatchOptions o;
    o.models = models;
    o.commands = commands;
    o.report_dir = report_dir;
    apply_options(o, options, batch_setters(), "batch");
    return call_library([&](const api::CallContext& ctx) { return api::batch(o, ctx); }, progress);
  });
  m.def("batch_keywords", [] { return keywords(batch_setters()); });
}

}  // namespace onnxdbg::python

PYBIND11_MODULE(_core, m) {
  using namespace onnxdbg;
  using namespace onnxdbg::python;
  m.doc() = "onnxdbg's C++ library (the binding behind the onnxdbg package; use that)";
  bind_errors(m);
  m.def("model_info", &model_info, py::arg("path"));
  m.def("run_backend", &run_backend);
  m.def("version", [] { return std::string(ONNXDBG_VERSION); });
  m.def("option_schema", &schema_rows);
  m.def("parse_memory_size",
        [](const std::string& text) { return value_or_raise(parse_memory_size(text)); });

  bind_compare_and_reduce(m);
  bind_bisect_optimizers(m);
  bind_model_tools(m);
  bind_surgeon_and_view(m);
  bind_batch(m);
}
