// The built-in oracles (--fail-on mismatch|error|nan): run a candidate on the chosen backends with
// its golden input values and decide without a subprocess per check. The reference's outputs of
// a value-preserving candidate are the golden values already computed, so it never runs again.
#include <regex>
#include <unordered_map>
#include <unordered_set>

#include "comparator/precision.h"
#include "layerwise/layerwise.h"
#include "model/graph.h"
#include "reduce/oracle.h"
#include "reference/interpreter.h"

namespace onnxdbg::reduce {

Expected<FailOn> fail_on_from_name(const std::string& name) {
  return enum_from_name(kFailOnNames, name, "--fail-on");
}

std::string fail_on_name(FailOn f) { return std::string(enum_name(kFailOnNames, f)); }

namespace {

class BuiltinOracle : public Oracle {
 public:
  BuiltinOracle(BuiltinOptions o, std::vector<std::unique_ptr<Backend>> backends,
                std::vector<std::regex> regexes)
      : o_(std::move(o)), backends_(std::move(backends)), regexes_(std::move(regexes)) {}

  std::string describe() const override {
    std::string s;
    for (FailOn f : o_.fail_on) s += (s.empty() ? "" : "|") + fail_on_name(f);
    s += " on ";
    for (size_t i = 0; i < o_.backends.size(); ++i)
      s += (i ? (o_.fail_on.count(FailOn::kMismatch) ? " vs " : ", ") : "") +
           o_.backends[i].to_string();
    return s;
  }

  int max_parallel() const override { return std::max(1, o_.jobs); }

  // A disagreement of the original: the layerwise comparison of the disagreeing backend against
  // the reference (the golden backend) names the first divergent node; its op type becomes part
  // of the signature. When the golden backend is not the plain reference, or the comparison
  // finds nothing, the signature stays without it.
  void anchor(const BuiltCandidate& original, OracleVerdict& verdict) override {
    const std::string prefix = "mismatch|";
    if (verdict.signature.rfind(prefix, 0) != 0 || original.feeds.empty()) return;
    if (o_.backends[0].name != "reference" || !o_.backends[0].options.empty()) return;
    if (o_.work_dir.empty()) return;  // no folder of our own for the comparison's models
    const size_t vs = verdict.signature.find(" vs ");
    const std::string which = verdict.signature.substr(prefix.size(), vs - prefix.size());
    std::vector<BackendSpec> specs;
    for (size_t b = 1; b < o_.backends.size(); ++b)
      if (o_.backends[b].to_string() == which) specs.push_back(o_.backends[b]);
    if (specs.size() != 1) return;
    LoadedModel m;
    m.proto = original.model;
    m.path = o_.work_dir / "original.onnx";
    m.base_dir = original.base_dir;  // its external data stays in the original's folder
    if (!write_candidate(original, m.path)) return;
    LayerwiseOptions lo;
    lo.tolerance = o_.tolerance;
    lo.error_stat = o_.error_stat;
    lo.temp_dir = o_.work_dir;
    auto rep = run_layerwise(m, specs, original.feeds[0], lo);
    std::error_code ec;
    std::filesystem::remove(m.path, ec);
    if (!rep || !rep->first) return;
    anchor_op_ = rep->tensors[rep->first->tensor].op_type;
    verdict.signature += "|first divergent " + anchor_op_;
  }

  Expected<OracleVerdict> test(const BuiltCandidate& c, int slot) override {
    if (c.feeds.empty() && !c.inputs.empty())
      return internal_error("candidate without input values reached the built-in oracle");
    // One session per backend and candidate; samples run in the same session.
    std::vector<std::vector<TensorMap>> outputs(backends_.size());
    std::filesystem::path candidate_file;  // written once, for the first backend that loads it
    for (size_t b = 0; b < backends_.size(); ++b) {
      std::string error, stage;
      auto st = run_backend(b, c, slot, candidate_file, outputs[b], error, stage);
      if (!st) return st;
      if (!error.empty()) {
        OracleVerdict v;
        const bool matches = regexes_.empty() || std::any_of(regexes_.begin(), regexes_.end(),
                                                             [&](const std::regex& r) {
                                                               return std::regex_search(error, r);
                                                             });
        v.fails = o_.fail_on.count(FailOn::kError) && matches;
        v.detail = o_.backends[b].to_string() + " failed: " + first_line(error);
        // A crashed worker's stderr tail (log lines of earlier sessions, timestamps) is context,
        // not the failure.
        std::string what = first_line(error);
        if (size_t p = what.find("; its stderr ended with"); p != std::string::npos) what.resize(p);
        v.signature = "error|" + o_.backends[b].to_string() + "|" + stage + "|" + what;
        return v;
      }
    }
    OracleVerdict v;
    if (o_.fail_on.count(FailOn::kNan)) {
      for (size_t s = 0; s < c.feeds.size() || (s == 0 && c.feeds.empty()); ++s) {
        bool inputs_finite = true;
        if (!c.feeds.empty())
          for (const auto& [name, t] : c.feeds[s]) inputs_finite &= count_nan_or_inf(t) == 0;
        if (!inputs_finite) continue;
        for (size_t b = 0; b < backends_.size(); ++b)
          for (const auto& [name, t] : outputs[b][s])
            if (int64_t k = count_nan_or_inf(t); k > 0) {
              v.fails = true;
              v.signature = "nan|" + o_.backends[b].to_string();
              v.detail = o_.backends[b].to_string() + ": output '" + name + "' has " +
                         std::to_string(k) + " NaN/Inf of " + std::to_string(t.numel()) +
                         " from finite inputs";
              return v;
            }
      }
    }
    if (o_.fail_on.count(FailOn::kMismatch)) {
      for (size_t s = 0; s < outputs[0].size(); ++s)
        for (size_t b = 1; b < backends_.size(); ++b)
          for (const auto& [name, golden] : outputs[0][s]) {
            auto it = outputs[b][s].find(name);
            if (it == outputs[b][s].end()) continue;
            TensorComparison cmp =
                compare_tensors(it->second, golden, o_.tolerance.for_output(name), o_.error_stat);
            if (!cmp.pass) {
              v.fails = true;
              // A disagreement in shape is another failure than one in values.
              v.signature = "mismatch|" + o_.backends[b].to_string() + " vs " +
                            o_.backends[0].to_string() + "|" +
                            (it->second.shape() == golden.shape() ? "values" : "shape");
              if (!anchor_op_.empty())
                v.signature += feeds_from(c.model, name, anchor_op_)
                                   ? "|first divergent " + anchor_op_
                                   : "|first divergent elsewhere";
              v.detail = o_.backends[b].to_string() + " vs " + o_.backends[0].to_string() +
                         ", output '" + name + "': " + cmp.reason;
              return v;
            }
          }
    }
    v.detail = "no " + std::string(o_.fail_on.count(FailOn::kMismatch) ? "mismatch" : "failure");
    return v;
  }

 private:
  static std::string first_line(const std::string& s) {
    const size_t p = s.find('\n');
    return p == std::string::npos ? s : s.substr(0, p);
  }

  // Runs every sample of `c` on backend b (from job `slot`); `file` is where the candidate was
  // written for an earlier backend of this test, empty until then. A backend failure goes to
  // `error` (a verdict) and `stage` ("load" or "run"); only trouble of our own (cannot write
  // the candidate) is a Status.
  Status run_backend(size_t b, const BuiltCandidate& c, int slot, std::filesystem::path& file,
                     std::vector<TensorMap>& out, std::string& error, std::string& stage) {
    stage = "load";
    const size_t samples = std::max<size_t>(1, c.feeds.size());
    out.assign(samples, {});
    const TensorMap empty;
    auto feed = [&](size_t s) -> const TensorMap& { return c.feeds.empty() ? empty : c.feeds[s]; };
    // The plain reference runs in this process; a reference with options (precision, ...) and
    // the isolated backends load the candidate from a file, as `run` does.
    if (o_.backends[b].name == "reference" && o_.backends[b].options.empty()) {
      if (!c.golden_outputs.empty()) {
        out = c.golden_outputs;
        return Status::ok();
      }
      auto interp = reference::Interpreter::create(c.model, c.base_dir);
      if (!interp) {
        error = interp.status().to_string();
        return Status::ok();
      }
      stage = "run";
      for (size_t s = 0; s < samples; ++s) {
        auto r = (*interp)->run(feed(s));
        if (!r) {
          error = r.status().to_string();
          return Status::ok();
        }
        out[s] = std::move(*r);
      }
      return Status::ok();
    }
    const std::filesystem::path dir = o_.work_dir / ("job" + std::to_string(slot));
    if (file.empty()) {
      ODB_RETURN_IF_ERROR(write_candidate(c, dir / "candidate.onnx"));
      file = dir / "candidate.onnx";
    }
    Expected<std::unique_ptr<Session>> session = internal_error("no session");
    if (o_.backends[b].option("precision") == "fp16") {
      // The candidate converted as `run` converts the model (float32 inputs and outputs kept).
      auto fp16 = write_fp16_model(c.model, c.base_dir, dir / "candidate_fp16.onnx");
      if (!fp16) {
        error = fp16.status().to_string();
        return Status::ok();
      }
      session = backends_[b]->load(*fp16);
    } else {
      session = backends_[b]->load(file, c.base_dir);
    }
    if (!session) {
      error = session.status().to_string();
      return Status::ok();
    }
    stage = "run";
    for (size_t s = 0; s < samples; ++s) {
      auto r = (*session)->run(feed(s));
      if (!r) {
        error = r.status().to_string();
        return Status::ok();
      }
      out[s] = std::move(r->outputs);
    }
    return Status::ok();
  }

  // Whether a node of type `op` computes `value` or feeds it, in `m`'s main graph.
  static bool feeds_from(const onnx::ModelProto& m, const std::string& value,
                         const std::string& op) {
    const auto& g = m.graph();
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < g.node_size(); ++i)
      for (const auto& out : g.node(i).output()) producer.emplace(out, i);
    std::vector<std::string> work{value};
    std::unordered_set<int> seen;
    while (!work.empty()) {
      auto it = producer.find(work.back());
      work.pop_back();
      if (it == producer.end() || !seen.insert(it->second).second) continue;
      const auto& node = g.node(it->second);
      if (node.op_type() == op) return true;
      for (const auto& r : node_reads(node)) work.push_back(r);
    }
    return false;
  }

  BuiltinOptions o_;
  std::string anchor_op_;  // op type of the original's first divergent node, "" when unknown
  std::vector<std::unique_ptr<Backend>> backends_;
  std::vector<std::regex> regexes_;
};

}  // namespace

Expected<std::unique_ptr<Oracle>> make_builtin_oracle(const BuiltinOptions& options) {
  if (options.fail_on.empty()) return invalid_argument("--fail-on names no failure");
  if (options.backends.empty()) return invalid_argument("--fail-on needs --backends");
  if (options.fail_on.count(FailOn::kMismatch) && options.backends.size() < 2)
    return invalid_argument(
        "--fail-on mismatch compares backends: give at least two (e.g. --backends "
        "reference,onnxruntime)");
  ODB_ASSIGN_OR_RETURN(std::vector<std::regex> regexes, compile_fail_regexes(options.fail_regex));
  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& spec : options.backends) {
    if (auto precision = spec_precision(spec); !precision) return precision.status();
    ODB_ASSIGN_OR_RETURN(auto b, create_backend(without_precision(spec)));
    backends.push_back(std::move(b));
  }
  return std::unique_ptr<Oracle>(
      new BuiltinOracle(options, std::move(backends), std::move(regexes)));
}

}  // namespace onnxdbg::reduce
