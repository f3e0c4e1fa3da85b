// Multi-backend run and comparison against the golden (first) backend.
#include "runner/compare_run.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace onnxdbg {

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kAgree: return "agree";
    case Verdict::kDisagree: return "disagree";
    case Verdict::kError: return "error";
  }
  return "error";
}

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

}  // namespace

CompareRunReport run_and_compare(const std::filesystem::path& model_path,
                                 const std::vector<BackendSpec>& specs, const TensorMap& inputs,
                                 const CompareRunOptions& options) {
  CompareRunReport rep;
  rep.model = model_path.string();
  rep.inputs = inputs;
  rep.validated = options.validate;
  rep.error_stat = options.error_stat;
  auto progress = [&](const std::string& s) {
    if (options.progress) options.progress(s);
  };

  if (options.golden_outputs) {
    BackendRun loaded;
    loaded.spec.name = "loaded";
    loaded.spec.options["file"] = options.golden_source;
    loaded.description = "golden outputs loaded from " + options.golden_source;
    loaded.ok = true;
    for (const auto& [name, t] : *options.golden_outputs) {
      loaded.info.output_names.push_back(name);
      loaded.outputs.emplace(name, t);
    }
    rep.backends.push_back(std::move(loaded));
  }
  // precision=fp16: one float16 copy of the model for every such backend, and the tensors that
  // overflow float16 named before any of them runs.
  std::filesystem::path fp16_dir, fp16_model;
  Status fp16_status;
  for (const auto& spec : specs) {
    if (spec.option("precision") != "fp16" || !fp16_model.empty() || !fp16_status.is_ok()) continue;
    progress("converting the model to float16");
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/onnxdbg-fp16-XXXXXX";
    if (!mkdtemp(templ.data())) {
      fp16_status = invalid_argument("cannot create a temporary folder for the float16 model");
      break;
    }
    fp16_dir = templ;
    auto written = write_fp16_model(model_path, fp16_dir);
    if (written)
      fp16_model = *written;
    else
      fp16_status = written.status();
    auto overflows = find_fp16_overflows(model_path, inputs);
    if (overflows)
      rep.fp16_overflows = std::move(*overflows);
    else
      rep.fp16_check_error = overflows.status().to_string();
  }

  for (const auto& spec : specs) {
    BackendRun br;
    br.spec = spec;
    const bool fp16 = spec.option("precision") == "fp16";
    if (fp16 && !fp16_status.is_ok()) {
      br.failed_stage = "create";
      br.error = fp16_status.to_string();
      rep.backends.push_back(std::move(br));
      continue;
    }
    auto backend = create_backend(without_precision(spec));
    if (!backend) {
      br.failed_stage = "create";
      br.error = backend.status().to_string();
      rep.backends.push_back(std::move(br));
      continue;
    }
    br.description = (*backend)->describe();
    progress("loading the model on " + spec.to_string());
    auto session = (*backend)->load(fp16 ? fp16_model : model_path);
    if (!session) {
      br.failed_stage = "load";
      br.error = session.status().to_string();
      rep.backends.push_back(std::move(br));
      continue;
    }
    br.info = (*session)->info();
    progress("running " + spec.to_string());
    auto run = (*session)->run(inputs);
    if (!run) {
      br.failed_stage = "run";
      br.error = run.status().to_string();
      rep.backends.push_back(std::move(br));
      continue;
    }
    br.ok = true;
    br.run_seconds = run->run_seconds;
    br.outputs = std::move(run->outputs);
    rep.backends.push_back(std::move(br));
  }

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
    for (const auto& b : rep.backends) {
      if (!b.ok || &b == golden) continue;
      for (const auto& [name, want] : golden->outputs) {
        OutputComparison oc;
        oc.output = name;
        oc.backend = b.spec.to_string();
        oc.against = golden->spec.to_string();
        oc.tol = options.tolerance.for_output(name);
        auto it = b.outputs.find(name);
        if (it == b.outputs.end()) {
          oc.result.reason = "the backend did not return this output";
          oc.result.shape = want.shape();
          oc.result.numel = want.numel();
          oc.result.mismatches = want.numel();
        } else {
          oc.result = compare_tensors(it->second, want, oc.tol, options.error_stat);
        }
        rep.comparisons.push_back(std::move(oc));
      }
    }
    for (const auto& c : rep.comparisons)
      if (!c.result.pass && (!worst || c.result.max_abs_error > worst->result.max_abs_error)) worst = &c;
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

  int ok_backends = static_cast<int>(rep.backends.size()) - failed_backends;
  if (worst) {
    int failing = 0;
    for (const auto& c : rep.comparisons) failing += !c.result.pass;
    rep.verdict = Verdict::kDisagree;
    std::ostringstream os;
    os << worst->backend << " disagrees with " << worst->against << " on output '" << worst->output
       << "'";
    if (!worst->result.reason.empty() && worst->result.worst_index < 0) {
      os << ": " << worst->result.reason;
    } else {
      os << ": max abs error " << fmt_num(worst->result.max_abs_error) << " at "
         << index_string(worst->result.worst_index, worst->result.shape) << ", "
         << worst->result.mismatches << " of " << worst->result.numel
         << " elements outside atol " << fmt_num(worst->tol.atol) << " rtol " << fmt_num(worst->tol.rtol);
    }
    if (failing > 1) os << " (" << failing << " comparisons fail in all)";
    // Backends that match the golden values on every output point at the odd one out.
    std::string agreeing;
    for (const auto& b : rep.backends) {
      if (!b.ok || &b == golden) continue;
      bool all_pass = true;
      for (const auto& c : rep.comparisons)
        if (c.backend == b.spec.to_string() && !c.result.pass) all_pass = false;
      if (all_pass) agreeing += (agreeing.empty() ? "" : ", ") + b.spec.to_string();
    }
    if (!agreeing.empty())
      os << "; " << agreeing << (agreeing.find(',') == std::string::npos ? " agrees" : " agree")
         << " with " << golden->spec.to_string();
    rep.verdict_line = os.str();
  } else if (!rep.validation.empty()) {
    rep.verdict = Verdict::kDisagree;
    const auto& v = rep.validation.front();
    rep.verdict_line = "output '" + v.output + "' of " + v.backend + " has " + std::to_string(v.count) +
                       " NaN/Inf values (--validate)";
  } else if (failed_backends > 0 || ok_backends == 0) {
    rep.verdict = Verdict::kError;
    std::string names;
    for (const auto& b : rep.backends)
      if (!b.ok) names += (names.empty() ? "" : ", ") + b.spec.to_string() + " (" + b.failed_stage + ")";
    rep.verdict_line = "could not run on " + names;
    if (ok_backends > 1) rep.verdict_line += "; the other " + std::to_string(ok_backends) + " backends agree";
    else if (ok_backends == 1) rep.verdict_line += "; nothing left to compare against";
  } else if (ok_backends == 1) {
    rep.verdict = Verdict::kAgree;
    rep.verdict_line = "ran on " + rep.backends.front().spec.to_string() + " only; nothing to compare";
  } else {
    rep.verdict = Verdict::kAgree;
    rep.verdict_line = "all " + std::to_string(ok_backends) + " backends agree on " +
                       std::to_string(golden->outputs.size()) + " output" +
                       (golden->outputs.size() == 1 ? "" : "s") + " within atol " +
                       fmt_num(options.tolerance.default_tol.atol) + " rtol " +
                       fmt_num(options.tolerance.default_tol.rtol);
  }
  if (!fp16_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(fp16_dir, ec);
  }
  return rep;
}

}  // namespace onnxdbg
