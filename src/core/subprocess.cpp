// Subprocess: posix_spawn(p) with file actions for the three standard streams, waitpid with a
// deadline (polled every few milliseconds), and the SIGTERM/SIGKILL sequence.
#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>
#include <utility>

extern char** environ;

namespace onnxdbg {
namespace {

/// How often wait() with a deadline looks whether the child has ended.
constexpr auto kWaitPollInterval = std::chrono::milliseconds(5);

void close_fd(int& fd) noexcept {
  if (fd >= 0) close(fd);
  fd = -1;
}

/// Moves a new descriptor out of 0..2 (close-on-exec), so that dup2 onto the child's standard
/// streams never overwrites one that a later file action still needs.
int above_stdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

Status system_error(int err, const std::string& what) {
  return Status(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kInternal, std::strerror(err))
      .with_context(what);
}

/// The descriptors of one standard stream while spawning: `child` is dup2'd onto the stream and
/// closed in us afterwards; `ours` is our end of a pipe.
struct StreamFds {
  int child = -1;
  int ours = -1;
};

/// Opens what `s` asks for stream `target` (0, 1 or 2). Every descriptor is close-on-exec and
/// above 2.
Expected<StreamFds> open_stream(const Stdio& s, int target) {
  StreamFds f;
  switch (s.kind) {
    case Stdio::Kind::kInherit:
      return f;
    case Stdio::Kind::kNull:
      f.child = above_stdio(open("/dev/null", (target == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC));
      if (f.child < 0) return system_error(errno, "opening /dev/null");
      return f;
    case Stdio::Kind::kFile: {
      const int flags = target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC;
      f.child = above_stdio(open(s.file.c_str(), flags | O_CLOEXEC, 0644));
      if (f.child < 0) {
        const int e = errno;
        return Status(ErrorCode::kNotFound, std::strerror(e))
            .with_context("opening " + s.file.string());
      }
      return f;
    }
    case Stdio::Kind::kFd:
      f.child = s.fd < 0 ? -1 : fcntl(s.fd, F_DUPFD_CLOEXEC, 3);
      if (f.child < 0) return system_error(s.fd < 0 ? EBADF : errno, "copying a descriptor");
      return f;
    case Stdio::Kind::kPipe: {
      int p[2];
      if (pipe2(p, O_CLOEXEC) != 0) return system_error(errno, "creating a pipe");
      const int read_end = above_stdio(p[0]), write_end = above_stdio(p[1]);
      f.child = target == 0 ? read_end : write_end;
      f.ours = target == 0 ? write_end : read_end;
      return f;
    }
  }
  return internal_error("unknown Stdio kind");
}

}  // namespace

bool ExitStatus::exited() const { return WIFEXITED(raw); }
int ExitStatus::exit_code() const { return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1; }
bool ExitStatus::signaled() const { return WIFSIGNALED(raw); }
int ExitStatus::signal() const { return WIFSIGNALED(raw) ? WTERMSIG(raw) : 0; }

Expected<Subprocess> Subprocess::spawn(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty())
    return invalid_argument("no program to start");
  const std::string what = "starting " + options.argv[0];
  std::array<StreamFds, 3> fds;
  auto close_fds = [&fds] {
    for (auto& f : fds) {
      close_fd(f.child);
      close_fd(f.ours);
    }
  };
  const Stdio* streams[3] = {&options.in, &options.out, &options.err};
  for (int k = 0; k < 3; ++k) {
    Expected<StreamFds> f = open_stream(*streams[k], k);
    if (!f) {
      close_fds();
      return Status(f.status()).with_context(what);
    }
    fds[static_cast<size_t>(k)] = *f;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int k = 0; k < 3; ++k) {
    if (fds[static_cast<size_t>(k)].child >= 0)
      posix_spawn_file_actions_adddup2(&actions, fds[static_cast<size_t>(k)].child, k);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.new_process_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);

  std::vector<std::string> argv_text = options.argv;
  std::vector<char*> argv;
  argv.reserve(argv_text.size() + 1);
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  if (options.environment) {
    env_text = *options.environment;
  } else {
    for (char** e = environ; e && *e; ++e) env_text.emplace_back(*e);
  }
  env_text.insert(env_text.end(), options.extra_environment.begin(),
                  options.extra_environment.end());
  std::vector<char*> envp;
  envp.reserve(env_text.size() + 1);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  const int rc = options.search_path
                     ? posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data())
                     : posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  for (auto& f : fds) close_fd(f.child);
  if (rc != 0) {
    close_fds();
    return system_error(rc, what);
  }
  Subprocess p;
  p.pid_ = pid;
  p.own_group_ = options.new_process_group;
  p.in_ = fds[0].ours;
  p.out_ = fds[1].ours;
  p.err_ = fds[2].ours;
  return p;
}

Subprocess::~Subprocess() {
  close_all();
  if (pid_ > 0 && !reaped_) terminate(Clock::duration::zero());
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      own_group_(std::exchange(other.own_group_, false)),
      reaped_(std::exchange(other.reaped_, false)),
      status_(other.status_),
      in_(std::exchange(other.in_, -1)),
      out_(std::exchange(other.out_, -1)),
      err_(std::exchange(other.err_, -1)) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    Subprocess old(std::move(*this));  // ends what *this owned
    pid_ = std::exchange(other.pid_, -1);
    own_group_ = std::exchange(other.own_group_, false);
    reaped_ = std::exchange(other.reaped_, false);
    status_ = other.status_;
    in_ = std::exchange(other.in_, -1);
    out_ = std::exchange(other.out_, -1);
    err_ = std::exchange(other.err_, -1);
  }
  return *this;
}

void Subprocess::close_stdin() { close_fd(in_); }
void Subprocess::close_stdout() { close_fd(out_); }
void Subprocess::close_stderr() { close_fd(err_); }

void Subprocess::close_all() noexcept {
  close_fd(in_);
  close_fd(out_);
  close_fd(err_);
}

std::optional<ExitStatus> Subprocess::poll() {
  if (pid_ <= 0) return std::nullopt;
  if (reaped_) return status_;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    status_.raw = status;
    return status_;
  }
  if (r < 0 && errno != EINTR) {  // not our child any more (ECHILD): nothing to reap
    reaped_ = true;
    status_.raw = 0;
    return status_;
  }
  return std::nullopt;
}

std::optional<ExitStatus> Subprocess::wait(std::optional<Clock::duration> timeout) {
  if (pid_ <= 0) return std::nullopt;
  if (reaped_) return status_;
  if (!timeout) {
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    status_.raw = r == pid_ ? status : 0;
    return status_;
  }
  const auto until = Clock::now() + *timeout;
  for (;;) {
    if (auto s = poll()) return s;
    if (Clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(kWaitPollInterval);
  }
}

void Subprocess::kill_group(int sig) {
  if (pid_ <= 0) return;
  if (own_group_)
    ::kill(-pid_, sig);
  else if (!reaped_)
    ::kill(pid_, sig);
}

ExitStatus Subprocess::terminate(Clock::duration grace) {
  if (pid_ <= 0) return status_;
  if (!reaped_ && grace > Clock::duration::zero()) {
    kill_group(SIGTERM);
    wait(grace);
  }
  kill_group(SIGKILL);
  wait();
  return status_;
}

Expected<CapturedRun> run_captured(SpawnOptions options, double timeout_s,
                                   Subprocess::Clock::duration kill_grace, size_t cap_bytes,
                                   const std::function<bool()>& cancelled) {
  using Clock = Subprocess::Clock;
  options.out = Stdio::pipe();
  options.err = Stdio::pipe();
  ODB_ASSIGN_OR_RETURN(Subprocess p, Subprocess::spawn(options));
  CapturedRun r;
  const auto start = Clock::now();
  auto seconds_left = [&] {
    return timeout_s - std::chrono::duration<double>(Clock::now() - start).count();
  };
  pollfd fds[2] = {{p.stdout_fd(), POLLIN, 0}, {p.stderr_fd(), POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  constexpr int kCancelPollMs = 50;
  auto stop_asked = [&] { return cancelled && cancelled(); };
  while (open_fds > 0) {
    if (stop_asked()) {
      r.cancelled = true;
      break;
    }
    int wait_ms = -1;
    if (timeout_s > 0) {
      const double left = seconds_left();
      if (left <= 0) {
        r.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left * 1000) + 1;
    }
    if (cancelled) wait_ms = wait_ms < 0 ? kCancelPollMs : std::min(wait_ms, kCancelPollMs);
    const int pr = ::poll(fds, 2, wait_ms);
    if (pr <= 0) continue;  // EINTR, or the deadline (checked above)
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = read(fds[k].fd, buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        fds[k].fd = -1;  // poll skips negative descriptors
        --open_fds;
        continue;
      }
      std::string& dst = k == 0 ? r.out : r.err;
      if (dst.size() < cap_bytes)
        dst.append(buf, std::min(static_cast<size_t>(got), cap_bytes - dst.size()));
    }
  }
  p.close_stdout();
  p.close_stderr();
  // Both pipes closed, but the child may still run: it gets what is left of the time, asked
  // about cancellation as above.
  while (!r.timed_out && !r.cancelled && !p.poll()) {
    if (stop_asked()) {
      r.cancelled = true;
      break;
    }
    double slice = cancelled ? kCancelPollMs / 1000.0 : 3600.0;
    if (timeout_s > 0) {
      const double left = seconds_left();
      if (left <= 0) {
        r.timed_out = true;
        break;
      }
      slice = std::min(slice, left);
    }
    p.wait(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(slice)));
  }
  if (r.timed_out || r.cancelled) {
    r.status = p.terminate(kill_grace);
  } else {
    r.status = *p.wait();
    // Descendants that kept running in the group after the command exited are not ours to keep.
    if (p.has_own_group()) p.kill_group(SIGKILL);
  }
  return r;
}

bool is_executable_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

std::string read_file_head(const std::filesystem::path& p, size_t cap_bytes) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(p, ec);
  if (ec) return {};
  std::ifstream in(p, std::ios::binary);
  std::string s(std::min<uintmax_t>(size, cap_bytes), '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

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

}  // namespace onnxdbg
