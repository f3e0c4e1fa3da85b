// The reference backend: wraps reference::Interpreter in the Backend/Session interface.
#include "backends/reference/reference_backend.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/run_limits.h"
#include "model/model.h"
#include "reference/openblas_core.h"

namespace onnxdbg {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class ReferenceSession : public Session {
 public:
  ReferenceSession(std::unique_ptr<reference::Interpreter> interp, SessionInfo info)
      : interp_(std::move(interp)), info_(std::move(info)) {}
  // With profiling on, the per-op-type totals over all runs go to stderr, beside the tables
  // and JSON of stdout.
  ~ReferenceSession() override {
    if (!interp_->options().profile || runs_ == 0) return;
    std::fprintf(stderr, "reference profile: %d run(s), %.3f ms in total\n%s", runs_,
                 run_seconds_ * 1e3,
                 reference::format_profile(interp_->profile(), run_seconds_).c_str());
  }
  const SessionInfo& info() const override { return info_; }
  Expected<SessionRunResult> run(const TensorMap& inputs) override {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = interp_->run(inputs);
    if (!out) return std::move(out).status();
    SessionRunResult r;
    r.run_seconds = seconds_since(t0);
    r.peak_rss_bytes = peak_rss_bytes();
    ++runs_;
    run_seconds_ += r.run_seconds;
    r.outputs = std::move(*out);
    return r;
  }
  Expected<ValueRunResult> run_values(const ValueMap& inputs) override {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = interp_->run_values(inputs);
    if (!out) return std::move(out).status();
    ValueRunResult r;
    r.run_seconds = seconds_since(t0);
    r.outputs = std::move(*out);
    return r;
  }

 private:
  std::unique_ptr<reference::Interpreter> interp_;
  SessionInfo info_;
  int runs_ = 0;
  double run_seconds_ = 0;
};

class ReferenceBackend : public Backend {
 public:
  explicit ReferenceBackend(BackendSpec spec) : spec_(std::move(spec)) {}
  std::string name() const override { return "reference"; }
  const BackendSpec& spec() const override { return spec_; }
  std::string describe() const override {
    std::string s =
        "onnxdbg reference interpreter (OpenBLAS " + reference::openblas_core_name() + " kernels";
    if (const char* better = reference::better_openblas_core())
      s += std::string("; OPENBLAS_CORETYPE=") + better + " is faster on this CPU";
    return s + ")";
  }
  std::vector<std::string> unsupported_ops(const onnx::ModelProto& model) const override {
    std::vector<std::string> out;
    for (const auto& m : reference::find_missing_kernels(model))
      out.push_back(m.to_string() + (m.reason.empty() ? "" : " (" + m.reason + ")"));
    return out;
  }
  Expected<std::unique_ptr<Session>> do_load(
      const std::filesystem::path& model_path,
      const std::filesystem::path& external_data_dir) override {
    const auto t0 = std::chrono::steady_clock::now();
    ODB_ASSIGN_OR_RETURN(LoadedModel m, load_model(model_path, external_data_dir));
    return session(m, t0);
  }
  Expected<std::unique_ptr<Session>> do_load_model(const LoadedModel& model) override {
    return session(model, std::chrono::steady_clock::now());
  }

 private:
  // The interpreter over `m`; its load time counts from t0.
  Expected<std::unique_ptr<Session>> session(const LoadedModel& m,
                                             std::chrono::steady_clock::time_point t0) {
    ODB_ASSIGN_OR_RETURN(reference::InterpreterOptions options, reference_options(spec_));
    auto interp = reference::Interpreter::create(m.proto, m.base_dir, options);
    if (!interp) return std::move(interp).status();
    SessionInfo info;
    info.providers = {"reference"};
    // The model's own warnings (an IR or opset newer than the linked ONNX knows) are not the
    // backend's: whoever loaded the model reports them once (api::run among its messages);
    // repeated here they printed twice.
    for (const auto& o : m.proto.graph().output()) info.output_names.push_back(o.name());
    info.load_seconds = seconds_since(t0);
    return std::unique_ptr<Session>(new ReferenceSession(std::move(*interp), std::move(info)));
  }

  BackendSpec spec_;
};

}  // namespace

Expected<reference::InterpreterOptions> reference_options(const BackendSpec& spec) {
  reference::InterpreterOptions options;
  const std::string profile = spec.option("profile", "0");
  if (profile != "0" && profile != "1")
    return invalid_argument("reference: profile must be 0 or 1, not '" + profile + "'");
  options.profile = profile == "1";
  {
    const std::string seed = spec.option("random_seed", "0");
    char* end = nullptr;
    options.random_seed = std::strtoull(seed.c_str(), &end, 10);
    if (seed.empty() || seed[0] == '-' || *end)
      return invalid_argument("reference: random_seed must be a non-negative integer, not '" +
                              seed + "'");
  }
  {
    auto acc = reference::parse_accumulate(spec.option("accumulate", "float"));
    if (!acc) return invalid_argument("reference: " + acc.status().message());
    options.accumulate = *acc;
  }
  {
    const std::string threads = spec.option("threads", "");
    if (threads.empty()) {
      options.threads = 1;
    } else if (threads == "auto") {
      options.threads = reference::default_thread_count();
    } else {
      char* end = nullptr;
      const long n = std::strtol(threads.c_str(), &end, 10);
      if (*end || n < 1 || n > 256)
        return invalid_argument(
            "reference: threads must be an integer from 1 to 256 or auto, not '" + threads + "'");
      options.threads = static_cast<int>(n);
    }
  }
  if (const std::string t = spec.option("timeout", ""); !t.empty()) {
    char* end = nullptr;
    const double s = std::strtod(t.c_str(), &end);
    if (*end || !(s > 0) || s > 1e9)
      return invalid_argument("reference: timeout must be a positive number of seconds, not '" + t +
                              "'");
    options.timeout_seconds = s;
  }
  if (const std::string m = spec.option("max_memory", ""); !m.empty()) {
    auto bytes = parse_memory_size(m);
    if (!bytes) return invalid_argument("reference: max_memory: " + bytes.status().message());
    options.max_memory = *bytes;
  }
  if (const std::string n = spec.option("max_iterations", ""); !n.empty()) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(n.c_str(), &end, 10);
    if (*end || n[0] == '-' || v == 0)
      return invalid_argument("reference: max_iterations must be a positive integer, not '" + n +
                              "'");
    options.max_iterations = v;
  }
  return options;
}

std::unique_ptr<Backend> make_reference_backend(const BackendSpec& spec) {
  return std::make_unique<ReferenceBackend>(spec);
}

}  // namespace onnxdbg
