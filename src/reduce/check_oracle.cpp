// The --check oracle: writes the candidate where the command expects it, runs the command in its
// own process group with a timeout, and decides from its exit code and output (Polygraphy's
// `debug reduce --check` rules).
#include <cstdlib>
#include <regex>

#include "core/subprocess.h"
#include "data/npz.h"
#include "reduce/oracle.h"

namespace onnxdbg::reduce {

namespace {

/// What the check command may print and onnxdbg keeps, for each of stdout and stderr.
constexpr size_t kOutputCap = 8u << 20;

// Runs argv (on PATH) with stdin from /dev/null and stdout/stderr captured, in its own process
// group; kills the whole group after timeout_s (0 = never) and once the command has ended.
// Errors: kNotFound when argv[0] cannot be executed.
Expected<CapturedRun> run_check_command(const std::vector<std::string>& argv,
                                        const std::vector<std::string>& extra_env, double timeout_s,
                                        const std::function<bool()>& cancelled) {
  SpawnOptions options;
  options.argv = argv;
  options.search_path = true;
  options.extra_environment = extra_env;
  options.in = Stdio::null();
  options.new_process_group = true;
  // SIGKILL at the deadline (no grace): a check that overran its time gets no more.
  Expected<CapturedRun> r = run_captured(
      std::move(options), timeout_s, Subprocess::Clock::duration::zero(), kOutputCap, cancelled);
  if (r || r.status().code() == ErrorCode::kInvalidArgument) return r;
  if (r.status().code() == ErrorCode::kNotFound)
    return not_found("check command '" + argv[0] + "' was not found (is it on PATH?)");
  return not_found("check command '" + argv[0] + "' cannot be run: " + r.status().message());
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

class CheckOracle : public Oracle {
 public:
  CheckOracle(CheckOptions o, std::vector<std::regex> regexes)
      : o_(std::move(o)), regexes_(std::move(regexes)) {}

  std::string describe() const override {
    std::string cmd;
    for (const auto& a : o_.command) cmd += (cmd.empty() ? "" : " ") + a;
    return "check `" + cmd + "`";
  }
  int max_parallel() const override { return std::max(1, o_.jobs); }
  bool needs_values() const override { return false; }

  Expected<OracleVerdict> test(const BuiltCandidate& c, int slot) override {
    namespace fs = std::filesystem;
    fs::path artifact = o_.iter_artifact, inputs = o_.iter_inputs;
    const bool own_folder = o_.jobs > 1 || o_.executor;
    if (own_folder) {
      const fs::path dir = o_.work_dir / ("job" + std::to_string(slot));
      artifact = dir / fs::path(o_.iter_artifact).filename();
      inputs = dir / fs::path(o_.iter_inputs).filename();
    }
    // The user's command may read the candidate with any tool (ONNX's own loader refuses data
    // files that are links): beside the original it shares the original's data file, elsewhere
    // it is written self-contained.
    ODB_RETURN_IF_ERROR(save_candidate(c, artifact));
    if (!c.feeds.empty() && !c.feeds[0].empty()) ODB_RETURN_IF_ERROR(save_npz(inputs, c.feeds[0]));
    std::vector<std::string> argv;
    for (const auto& a : o_.command) {
      std::string arg = a;
      if (own_folder) {
        arg = replace_all(arg, o_.iter_artifact, artifact.string());
        arg = replace_all(arg, o_.iter_inputs, inputs.string());
      }
      argv.push_back(arg);
    }
    const std::string env = "ONNXDBG_ITER_ARTIFACT=" + fs::absolute(artifact).string();
    if (o_.executor) {
      std::vector<std::string> ship = {artifact.filename().string()};
      if (!c.feeds.empty() && !c.feeds[0].empty()) ship.push_back(inputs.filename().string());
      ODB_ASSIGN_OR_RETURN(CapturedRun p,
                           run_on_executor(argv, env, artifact.parent_path(), std::move(ship)));
      return verdict_of(p);
    }
    ODB_ASSIGN_OR_RETURN(CapturedRun p,
                         run_check_command(argv, {env}, o_.timeout_seconds, o_.cancelled));
    if (p.cancelled)
      return cancelled(
          "reduce cancelled while the check command ran; it was stopped with its "
          "process group");
    return verdict_of(p);
  }

 private:
  /// The check as a job of o_.executor (a Ray task: the candidate goes with it), in `dir`.
  Expected<CapturedRun> run_on_executor(const std::vector<std::string>& argv,
                                        const std::string& env, const std::filesystem::path& dir,
                                        std::vector<std::string> ship) {
    batch::JobSpec job;
    job.argv = argv;
    job.staging = dir;
    job.timeout = o_.timeout_seconds;
    job.ship_files = std::move(ship);
    job.environment = {env};
    std::error_code ec;
    std::filesystem::remove(dir / "stdout.json", ec);
    std::filesystem::remove(dir / "stderr.txt", ec);
    ODB_ASSIGN_OR_RETURN(batch::JobOutcome o, o_.executor->run(job, o_.cancelled));
    if (!o.lost.empty())
      return not_found("the check command could not run on the cluster: " + o.lost);
    CapturedRun p;
    p.timed_out = o.timed_out;
    p.status.raw = o.signal != 0 ? o.signal : (o.exit_code & 0xff) << 8;
    p.out = read_file_head(dir / "stdout.json", kOutputCap);
    p.err = read_file_head(dir / "stderr.txt", kOutputCap);
    return p;
  }

  /// Polygraphy's rules on a finished check.
  OracleVerdict verdict_of(const CapturedRun& p) const {
    OracleVerdict v;
    if (p.timed_out) {
      v.timed_out = true;
      v.fails = o_.timeout_means_fail;
      v.detail = "timed out after " + std::to_string(o_.timeout_seconds) + " s (counts as " +
                 (v.fails ? "failing" : "passing") + ")";
      return v;
    }
    const int signal = p.status.signal();
    const int code = signal ? 128 + signal : p.status.exit_code();
    bool code_fails = o_.fail_code ? code == *o_.fail_code : code != 0;
    if (o_.ignore_fail_code) code_fails = true;
    bool regex_ok = regexes_.empty();
    std::string matched;
    for (size_t k = 0; k < regexes_.size() && !regex_ok; ++k)
      if (std::regex_search(p.out, regexes_[k]) || std::regex_search(p.err, regexes_[k])) {
        regex_ok = true;
        matched = o_.fail_regex[k];
      }
    v.fails = code_fails && regex_ok;
    v.detail = signal ? "killed by signal " + std::to_string(signal)
                      : "exit code " + std::to_string(p.status.exit_code());
    if (!matched.empty()) v.detail += ", output matched '" + matched + "'";
    // The check's own last words tell a real failure from a broken check (a missing module, a
    // wrong path) at a glance.
    if (std::string last = last_line(p.err.empty() ? p.out : p.err); !last.empty())
      v.detail +=
          "; last line of its " + std::string(p.err.empty() ? "stdout" : "stderr") + ": " + last;
    return v;
  }

  CheckOptions o_;
  std::vector<std::regex> regexes_;
};

}  // namespace

Expected<std::vector<std::regex>> compile_fail_regexes(const std::vector<std::string>& regexes) {
  std::vector<std::regex> out;
  for (const auto& r : regexes) {
    try {
      out.emplace_back(r, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return invalid_argument("--fail-regex '" + r +
                              "' is not a valid regular expression: " + e.what());
    }
  }
  return out;
}

Expected<std::unique_ptr<Oracle>> make_check_oracle(const CheckOptions& options) {
  if (options.command.empty() || options.command[0].empty())
    return invalid_argument("--check needs a command");
  if (options.ignore_fail_code && options.fail_regex.empty())
    return invalid_argument("--ignore-fail-code needs --fail-regex (otherwise nothing can fail)");
  ODB_ASSIGN_OR_RETURN(std::vector<std::regex> regexes, compile_fail_regexes(options.fail_regex));
  return std::unique_ptr<Oracle>(new CheckOracle(options, std::move(regexes)));
}

}  // namespace onnxdbg::reduce
