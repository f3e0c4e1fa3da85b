// The --check oracle: writes the candidate where the command expects it, runs the command in its
// own process group with a timeout, and decides from its exit code and output (Polygraphy's
// `debug reduce --check` rules).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <regex>

#include "data/npz.h"
#include "reduce/oracle.h"

extern char** environ;

namespace onnxdbg::reduce {

namespace {

struct ProcessResult {
  int exit_code = -1;  ///< -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string out, err;
};

// Runs argv with stdout/stderr captured (each capped at 8 MiB); kills its whole process group
// after timeout_s (0 = never). Errors: kNotFound when argv[0] cannot be executed.
Expected<ProcessResult> run_process(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& extra_env, double timeout_s) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return internal_error("pipe failed");
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return internal_error("pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) env_store.emplace_back(*e);
  for (const auto& e : extra_env) env_store.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    if (rc == ENOENT)
      return not_found("check command '" + argv[0] + "' was not found (is it on PATH?)");
    return not_found("check command '" + argv[0] + "' cannot be run: " + std::strerror(rc));
  }

  ProcessResult r;
  constexpr size_t kCap = 8u << 20;
  const auto start = std::chrono::steady_clock::now();
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      const double left =
          timeout_s -
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (left <= 0) {
        r.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left * 1000) + 1;
    }
    const int pr = poll(fds, 2, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = read(fds[k].fd, buf, sizeof buf);
      if (got <= 0) {
        close(fds[k].fd);
        fds[k].fd = -1;
        --open_fds;
        continue;
      }
      std::string& dst = k == 0 ? r.out : r.err;
      if (dst.size() < kCap) dst.append(buf, static_cast<size_t>(got));
    }
  }
  if (r.timed_out) kill(-pid, SIGKILL);
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Descendants that kept running in the group after the command exited are not ours to keep.
  kill(-pid, SIGKILL);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
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
    if (o_.jobs > 1) {
      const fs::path dir = o_.work_dir / ("job" + std::to_string(slot));
      artifact = dir / fs::path(o_.iter_artifact).filename();
      inputs = dir / fs::path(o_.iter_inputs).filename();
    }
    ODB_RETURN_IF_ERROR(write_candidate(c, artifact));
    if (!c.feeds.empty() && !c.feeds[0].empty()) ODB_RETURN_IF_ERROR(save_npz(inputs, c.feeds[0]));
    std::vector<std::string> argv;
    for (const auto& a : o_.command) {
      std::string arg = a;
      if (o_.jobs > 1) {
        arg = replace_all(arg, o_.iter_artifact, artifact.string());
        arg = replace_all(arg, o_.iter_inputs, inputs.string());
      }
      argv.push_back(arg);
    }
    const std::string abs = fs::absolute(artifact).string();
    ODB_ASSIGN_OR_RETURN(ProcessResult p,
                         run_process(argv, {"ONNXDBG_ITER_ARTIFACT=" + abs}, o_.timeout_seconds));
    OracleVerdict v;
    if (p.timed_out) {
      v.timed_out = true;
      v.fails = o_.timeout_means_fail;
      v.detail = "timed out after " + std::to_string(o_.timeout_seconds) + " s (counts as " +
                 (v.fails ? "failing" : "passing") + ")";
      return v;
    }
    const int code = p.signal ? 128 + p.signal : p.exit_code;
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
    v.detail = p.signal ? "killed by signal " + std::to_string(p.signal)
                        : "exit code " + std::to_string(p.exit_code);
    if (!matched.empty()) v.detail += ", output matched '" + matched + "'";
    // The check's own last words tell a real failure from a broken check (a missing module, a
    // wrong path) at a glance.
    if (std::string last = last_line(p.err.empty() ? p.out : p.err); !last.empty())
      v.detail +=
          "; last line of its " + std::string(p.err.empty() ? "stdout" : "stderr") + ": " + last;
    return v;
  }

 private:
  CheckOptions o_;
  std::vector<std::regex> regexes_;
};

}  // namespace

std::string last_line(const std::string& text, size_t max_chars) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t begin = text.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  begin = text.find_first_not_of(" \t", begin);
  std::string line = text.substr(begin, end + 1 - begin);
  if (line.size() > max_chars) line = line.substr(0, max_chars) + "...";
  return line;
}

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
