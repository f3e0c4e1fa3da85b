// Multi-backend run and comparison against the golden (first) backend.
#include "comparator/compare_run.h"

#include <stdlib.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "compare/error_text.h"
#include "core/temp_dir.h"
#include "model/model.h"
#include "model/quantization.h"

namespace onnxdbg {

std::string verdict_name(Verdict v) { return std::string(enum_name(kVerdictNames, v)); }

namespace {

std::string fmt_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// "[0, 3, 1]" for a flat index into `shape`.
std::string index_string(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

// The scale of each quantized graph output of `model` that has one known scale (see
// model/quantization.h); looked for only when some output has a type quantization produces (8-
// and 16-bit integers, int4, int2), so that float models, and the int64 outputs of argmax or
// NMS, skip the search.
std::map<std::string, double> output_quant_scales(const LoadedModel& model,
                                                  const CompareRunReport& rep) {
  bool any_integer = false;
  for (const auto& b : rep.backends)
    for (const auto& [name, t] : b.outputs)
      any_integer = any_integer || is_narrow_integer(t.dtype()) ||
                    (is_integer(t.dtype()) && dtype_size(t.dtype()) <= 2);
  std::map<std::string, double> out;
  if (!any_integer) return out;
  for (const auto& [name, q] : quantized_tensors(model.proto.graph()))
    if (q.scale && *q.scale > 0) out[name] = *q.scale;
  return out;
}

// Every output of every other backend that ran against the golden backend's.
void compare_with_golden(CompareRunReport& rep, const BackendRun& golden,
                         const CompareRunOptions& options,
                         const std::map<std::string, double>& quant_scales) {
  for (const auto& b : rep.backends) {
    if (!b.ok || &b == &golden) continue;
    for (const auto& [name, want] : golden.outputs) {
      OutputComparison oc;
      oc.output = name;
      oc.backend = b.spec.to_string();
      oc.against = golden.spec.to_string();
      oc.tol = options.tolerance.for_output(name);
      auto it = b.outputs.find(name);
      if (it == b.outputs.end()) {
        oc.result.reason = "the backend did not return this output";
        oc.result.shape = want.shape();
        oc.result.numel = want.numel();
        oc.result.mismatches = want.numel();
      } else {
        oc.result = compare_tensors(it->second, want, oc.tol, options.error_stat);
        if (auto q = quant_scales.find(name); q != quant_scales.end())
          mark_quantized(oc.result, want.dtype(), q->second);
      }
      rep.comparisons.push_back(std::move(oc));
    }
  }
}

// "B disagrees with G on output 'y': max abs error ... at [i, j], n of m elements outside atol
// rtol (k comparisons fail in all); C agrees with G".
std::string disagreement_line(const CompareRunReport& rep, const OutputComparison& worst,
                              const BackendRun& golden) {
  int failing = 0;
  for (const auto& c : rep.comparisons) failing += !c.result.pass;
  std::ostringstream os;
  os << worst.backend << " disagrees with " << worst.against << " on output '" << worst.output
     << "'";
  if (!worst.result.reason.empty() && worst.result.worst_index < 0) {
    os << ": " << worst.result.reason;
  } else {
    os << ": max abs error " << max_abs_error_text(worst.result) << " at "
       << index_string(worst.result.worst_index, worst.result.shape) << ", "
       << worst.result.mismatches << " of " << worst.result.numel << " elements outside atol "
       << fmt_num(worst.tol.atol) << " rtol " << fmt_num(worst.tol.rtol);
  }
  if (failing > 1) os << " (" << failing << " comparisons fail in all)";
  // Backends that match the golden values on every output point at the odd one out.
  std::string agreeing;
  for (const auto& b : rep.backends) {
    if (!b.ok || &b == &golden) continue;
    bool all_pass = true;
    for (const auto& c : rep.comparisons)
      if (c.backend == b.spec.to_string() && !c.result.pass) all_pass = false;
    if (all_pass) agreeing += (agreeing.empty() ? "" : ", ") + b.spec.to_string();
  }
  if (!agreeing.empty())
    os << "; " << agreeing << (agreeing.find(',') == std::string::npos ? " agrees" : " agree")
       << " with " << golden.spec.to_string();
  return os.str();
}

// The line names every failed backend with its stage, then why each failed: the cause is the
// last line a reader sees.
std::string failure_line(const CompareRunReport& rep, int ok_backends) {
  std::string names, reasons;
  int failed = 0;
  for (const auto& b : rep.backends)
    if (!b.ok) {
      names += (names.empty() ? "" : ", ") + b.spec.to_string() + " (" + b.failed_stage + ")";
      reasons += (reasons.empty() ? "" : "; ") + b.spec.to_string() + ": " + b.error;
      ++failed;
    }
  std::string line = "could not run on " + names + ": ";
  if (failed == 1) {
    for (const auto& b : rep.backends)
      if (!b.ok) line += b.error;
  } else {
    line += reasons;
  }
  if (ok_backends > 1)
    line += "; the other " + std::to_string(ok_backends) + " backends agree";
  else if (ok_backends == 1)
    line += "; nothing left to compare against";
  return line;
}

// Compares every output of every backend of `rep` (already run) with the golden backend's (the
// first that ran), validates NaN/Inf when asked, and sets the verdict and its line.
void compare_outputs(CompareRunReport& rep, const CompareRunOptions& options,
                     const std::map<std::string, double>& quant_scales) {
  const BackendRun* golden = nullptr;
  for (const auto& b : rep.backends)
    if (b.ok) {
      golden = &b;
      break;
    }
  int failed_backends = 0;
  for (const auto& b : rep.backends) failed_backends += !b.ok;

  const OutputComparison* worst = nullptr;
  if (golden) {
    compare_with_golden(rep, *golden, options, quant_scales);
    for (const auto& c : rep.comparisons)
      if (!c.result.pass && (!worst || c.result.max_abs_error > worst->result.max_abs_error))
        worst = &c;
  }
  if (options.validate) {
    for (const auto& b : rep.backends) {
      if (!b.ok) continue;
      for (const auto& [name, t] : b.outputs) {
        const int64_t n = count_nan_or_inf(t);
        if (n) rep.validation.push_back({b.spec.to_string(), name, n, t.numel()});
      }
    }
  }

  const int ok_backends = static_cast<int>(rep.backends.size()) - failed_backends;
  if (worst) {
    rep.verdict = Verdict::kDisagree;
    rep.verdict_line = disagreement_line(rep, *worst, *golden);
  } else if (!rep.validation.empty()) {
    rep.verdict = Verdict::kDisagree;
    const auto& v = rep.validation.front();
    rep.verdict_line = "output '" + v.output + "' of " + v.backend + " has " +
                       std::to_string(v.count) + " NaN/Inf values (--validate)";
  } else if (failed_backends > 0 || ok_backends == 0) {
    rep.verdict = Verdict::kError;
    rep.verdict_line = failure_line(rep, ok_backends);
  } else if (ok_backends == 1) {
    rep.verdict = Verdict::kAgree;
    rep.verdict_line =
        "ran on " + rep.backends.front().spec.to_string() + " only; nothing to compare";
  } else {
    rep.verdict = Verdict::kAgree;
    rep.verdict_line = "all " + std::to_string(ok_backends) + " backends agree on " +
                       std::to_string(golden->outputs.size()) + " output" +
                       (golden->outputs.size() == 1 ? "" : "s") + " within atol " +
                       fmt_num(options.tolerance.default_tol.atol) + " rtol " +
                       fmt_num(options.tolerance.default_tol.rtol);
  }
}

// "1, 2" (at most 10 listed, then "...").
std::string index_list(const std::vector<size_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 10; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > 10) s += ", ...";
  return s;
}

}  // namespace

CompareRunReport run_and_compare(const LoadedModel& model, const std::vector<BackendSpec>& specs,
                                 const TensorMap& inputs, const CompareRunOptions& options) {
  assert(options.golden_outputs.size() <= 1);
  return std::move(run_and_compare_samples(model, specs, {inputs}, options).samples.front());
}

namespace {

/// Each sample's report before any backend runs: model, inputs, and the loaded golden outputs
/// as the pseudo-backend "loaded" when there are some.
void start_reports(const LoadedModel& model, const std::vector<TensorMap>& samples,
                   const CompareRunOptions& options, SamplesRunReport& out) {
  out.samples.resize(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    CompareRunReport& rep = out.samples[i];
    rep.model = model.path.string();
    rep.inputs = samples[i];
    rep.validated = options.validate;
    rep.error_stat = options.error_stat;
    if (options.golden_outputs.empty()) continue;
    BackendRun loaded;
    loaded.spec.name = "loaded";
    loaded.spec.options["file"] = options.golden_source;
    loaded.description = "golden outputs loaded from " + options.golden_source;
    loaded.ok = true;
    for (const auto& [name, t] : options.golden_outputs[i]) {
      loaded.info.output_names.push_back(name);
      loaded.outputs.emplace(name, t);
    }
    rep.backends.push_back(std::move(loaded));
  }
}

/// The float16 copy of the model every precision=fp16 backend loads (written in `dir`, removed
/// when the runs are done; its external data stays the original's), or why there is none.
struct Fp16Model {
  TempDir dir;
  LoadedModel model;
  Status status;
};

/// precision=fp16: one float16 copy of the model for every such backend, and the tensors that
/// overflow float16 named (for each sample: they depend on the values) before any of them runs.
void prepare_fp16(const LoadedModel& model, const std::vector<BackendSpec>& specs,
                  const std::vector<TensorMap>& samples, const CompareRunOptions& options,
                  Fp16Model& fp16, SamplesRunReport& out) {
  const bool wanted = std::any_of(specs.begin(), specs.end(), [](const BackendSpec& s) {
    return s.option("precision") == "fp16";
  });
  if (!wanted) return;
  if (options.progress) options.progress("converting the model to float16");
  auto dir = TempDir::create("onnxdbg-fp16-");
  if (!dir) {
    fp16.status = invalid_argument("cannot create a temporary folder for the float16 model");
    return;
  }
  fp16.dir = std::move(*dir);
  auto written = write_fp16_model(model.proto, model.base_dir,
                                  fp16.dir.path() / (model.path.stem().string() + "_fp16.onnx"));
  if (written)
    fp16.model = std::move(*written);
  else
    fp16.status = written.status();
  auto overflows = find_fp16_overflows(model, samples);
  for (size_t i = 0; i < samples.size(); ++i) {
    if (overflows[i])
      out.samples[i].fp16_overflows = std::move(*overflows[i]);
    else
      out.samples[i].fp16_check_error = overflows[i].status().to_string();
  }
}

/// A float16 model's float32 outputs are float16 values widened, unless the backend computed
/// them in float32: then the float16 run it was asked for did not happen there.
void warn_float32_outputs(const BackendSpec& spec, BackendRun& br) {
  for (const auto& [name, t] : br.outputs)
    if (holds_non_float16_values(t))
      br.info.warnings.push_back(
          "output '" + name +
          "' holds values float16 cannot represent: this backend computed it in float32, "
          "so float16 rounding and overflow do not show in it" +
          backend_traits(spec.name).float32_compute_reason);
}

/// A backend's error as one line: runtimes end some messages with a newline or nest them on
/// several lines, and the verdict line quotes them.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

/// One backend on every sample: created and loaded once, run on sample 0, 1, ...; a failure
/// before any run is its result on every sample left, a failed run that sample's only (the
/// next sample gets a fresh load: its worker may have crashed with it).
void run_backend(const LoadedModel& model, size_t index, const BackendSpec& spec,
                 const std::vector<TensorMap>& samples, const CompareRunOptions& options,
                 const Fp16Model& fp16, SamplesRunReport& out) {
  const size_t n = samples.size();
  auto progress = [&](const std::string& s) {
    if (options.progress) options.progress(s);
  };
  auto cancelled = [&] { return options.cancelled && options.cancelled(); };
  BackendRun failed;
  failed.spec = spec;
  auto fail_from = [&](size_t first, const std::string& stage, const Status& st) {
    failed.failed_stage = stage;
    failed.error = one_line(st.to_string());
    failed.error_code = st.code();
    for (size_t i = first; i < n; ++i) out.samples[i].backends.push_back(failed);
  };
  const bool is_fp16 = spec.option("precision") == "fp16";
  if (is_fp16 && !fp16.status.is_ok()) return fail_from(0, "create", fp16.status);
  auto backend = create_backend(without_precision(spec));
  if (!backend) return fail_from(0, "create", backend.status());
  failed.description = (*backend)->describe();
  std::unique_ptr<Session> session;
  for (size_t i = 0; i < n && !cancelled(); ++i) {
    const bool reused = session != nullptr;
    if (!session) {
      progress("loading the model on " + spec.to_string());
      // The converted model is written into a temp folder; its external data stays the original's.
      auto loaded = (*backend)->load(is_fp16 ? fp16.model : model);
      if (!loaded) return fail_from(i, "load", loaded.status());
      session = std::move(*loaded);
      if (options.wrap_session) session = options.wrap_session(index, std::move(session));
    }
    BackendRun br;
    br.spec = spec;
    br.description = failed.description;
    br.info = session->info();
    br.session_reused = reused;
    progress("running " + spec.to_string() +
             (n > 1 ? " on sample " + std::to_string(i) + " of " + std::to_string(n) : ""));
    auto run = session->run(samples[i]);
    // Warnings of the run (a backend's note on what it did with the inputs) join the load's.
    br.info.warnings = session->info().warnings;
    if (!run) {
      // A load the session put off to this run (OpenCV with symbolic input dims) failed: the
      // model was never loaded, so it is a failed load with the backend's reason.
      br.failed_stage = is_deferred_load_failure(run.status()) ? "load" : "run";
      br.error = one_line(run.status().to_string());
      br.error_code = run.status().code();
      session.reset();
    } else {
      if (run->load_seconds) br.info.load_seconds += *run->load_seconds;
      br.ok = true;
      br.run_seconds = run->run_seconds;
      br.peak_rss_bytes = run->peak_rss_bytes;
      br.outputs = std::move(run->outputs);
      if (is_fp16) warn_float32_outputs(spec, br);
    }
    out.samples[i].backends.push_back(std::move(br));
  }
}

}  // namespace

SamplesRunReport run_and_compare_samples(const LoadedModel& model,
                                         const std::vector<BackendSpec>& specs,
                                         const std::vector<TensorMap>& samples,
                                         const CompareRunOptions& options) {
  assert(!samples.empty());
  assert(options.golden_outputs.empty() || options.golden_outputs.size() == samples.size());
  SamplesRunReport out;
  start_reports(model, samples, options, out);
  Fp16Model fp16;  // its folder is removed when the runs are done
  prepare_fp16(model, specs, samples, options, fp16, out);
  for (size_t k = 0; k < specs.size(); ++k) {
    if (options.cancelled && options.cancelled()) break;
    run_backend(model, k, specs[k], samples, options, fp16, out);
  }
  std::map<std::string, double> quant_scales;
  if (!out.samples.empty()) quant_scales = output_quant_scales(model, out.samples.front());
  for (auto& rep : out.samples) compare_outputs(rep, options, quant_scales);
  summarize_samples(out);
  return out;
}

void summarize_samples(SamplesRunReport& report) {
  const size_t n = report.samples.size();
  report.failing.clear();
  std::vector<size_t> differ, invalid, error;
  for (size_t i = 0; i < n; ++i) {
    const CompareRunReport& rep = report.samples[i];
    if (rep.verdict == Verdict::kAgree) continue;
    report.failing.push_back(i);
    bool any_fail = false;
    for (const auto& c : rep.comparisons) any_fail = any_fail || !c.result.pass;
    if (rep.verdict == Verdict::kError)
      error.push_back(i);
    else if (any_fail)
      differ.push_back(i);
    else
      invalid.push_back(i);
  }
  if (n == 1) {
    report.verdict = report.samples.front().verdict;
    report.verdict_line = report.samples.front().verdict_line;
    return;
  }
  if (report.failing.empty()) {
    report.verdict = Verdict::kAgree;
    report.verdict_line =
        "all " + std::to_string(n) + " samples agree: " + report.samples.front().verdict_line;
    return;
  }
  report.verdict = differ.empty() && invalid.empty() ? Verdict::kError : Verdict::kDisagree;
  const std::string of_n = " of " + std::to_string(n) + " samples (";
  std::string line;
  auto part = [&](const std::string& what, const std::vector<size_t>& v) {
    if (v.empty()) return;
    line +=
        (line.empty() ? "" : "; ") + what + std::to_string(v.size()) + of_n + index_list(v) + ")";
  };
  part("outputs differ on ", differ);
  part("NaN/Inf (--validate) on ", invalid);
  part("could not run every backend on ", error);
  // The first sample of the verdict's own kind says what went wrong there.
  const size_t first = !differ.empty()    ? differ.front()
                       : !invalid.empty() ? invalid.front()
                                          : error.front();
  report.verdict_line =
      line + "; sample " + std::to_string(first) + ": " + report.samples[first].verdict_line;
}

}  // namespace onnxdbg
