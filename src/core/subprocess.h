// Subprocess: the one way onnxdbg starts child processes (the backend worker, reduce's --check
// command): posix_spawn with each standard stream inherited, /dev/null, a pipe, a file or a
// descriptor; optionally in a process group of its own; waits with a deadline; SIGTERM, then
// SIGKILL.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "onnxdbg/status.h"

namespace onnxdbg {

/// Where one of a child's standard streams goes.
struct Stdio {
  enum class Kind {
    kInherit,  ///< the child shares ours
    kNull,     ///< /dev/null
    kPipe,     ///< a pipe whose other end Subprocess keeps (stdin_fd() etc.)
    kFile,     ///< `file`: read (stdin), or created/truncated and written (stdout, stderr)
    kFd,       ///< a copy of our descriptor `fd` (we keep ours open)
  };
  Kind kind = Kind::kInherit;
  std::filesystem::path file;
  int fd = -1;

  static Stdio inherit() { return {}; }
  static Stdio null() { return {Kind::kNull, {}, -1}; }
  static Stdio pipe() { return {Kind::kPipe, {}, -1}; }
  static Stdio to_file(std::filesystem::path p) { return {Kind::kFile, std::move(p), -1}; }
  static Stdio from_fd(int descriptor) { return {Kind::kFd, {}, descriptor}; }
};

/// What to start and how.
struct SpawnOptions {
  /// The program and its arguments; argv[0] is a path, or a name looked up on $PATH when
  /// `search_path`. Must not be empty.
  std::vector<std::string> argv;
  bool search_path = false;
  /// The child's whole environment ("NAME=value" entries); ours when unset.
  std::optional<std::vector<std::string>> environment;
  /// Entries appended to the environment (an earlier entry of the same name wins for getenv).
  std::vector<std::string> extra_environment;
  Stdio in, out, err;
  /// Starts the child as the leader of a new process group, so that signals (terminate(),
  /// kill_group()) reach everything it starts too.
  bool new_process_group = false;
};

/// How a child ended: a waitpid status.
struct ExitStatus {
  int raw = 0;
  bool exited() const;
  /// The exit code, or -1 when a signal ended the child.
  int exit_code() const;
  bool signaled() const;
  /// The signal that ended the child, or 0 when it exited.
  int signal() const;
};

/// A started child process. Move-only. Every spawned child has its signal mask cleared and
/// SIGPIPE at its default action (whatever onnxdbg blocks or ignores). Destroying a Subprocess
/// whose child was not reaped yet kills it (SIGKILL, to its group when it has its own) and reaps
/// it; its pipe ends are closed. Not thread-safe: one owner uses it at a time.
class Subprocess {
 public:
  using Clock = std::chrono::steady_clock;

  /// Starts `options.argv`. Errors: kInvalidArgument for an empty argv; kNotFound when the
  /// program does not exist (ENOENT) or a kFile stream cannot be opened; kInternal for other
  /// failures (pipes, posix_spawn). The message is the system's reason alone ("No such file or
  /// directory"), with a context line naming the program, so that callers can word their own.
  static Expected<Subprocess> spawn(const SpawnOptions& options);

  Subprocess() = default;  ///< no process
  ~Subprocess();
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  /// The child's process id (also its process group id when it leads one); -1 when none.
  pid_t pid() const { return pid_; }
  bool has_own_group() const { return own_group_; }
  /// Our ends of the kPipe streams: write to stdin_fd(), read stdout_fd() and stderr_fd(); -1
  /// for a stream that is not a pipe or was closed. Blocking, close-on-exec, never 0..2.
  int stdin_fd() const { return in_; }
  int stdout_fd() const { return out_; }
  int stderr_fd() const { return err_; }
  /// Closes our end of a pipe (the child reads EOF on stdin; gets SIGPIPE writing the others).
  void close_stdin();
  void close_stdout();
  void close_stderr();

  /// Whether the child was reaped (by poll, wait or terminate).
  bool reaped() const { return reaped_; }
  /// Reaps the child if it has ended, without waiting: its status, or nullopt while it runs.
  std::optional<ExitStatus> poll();
  /// Waits for the child to end, at most `timeout` (forever when nullopt): its status, or nullopt
  /// if it still runs at the deadline. A child already reaped answers its status at once.
  std::optional<ExitStatus> wait(std::optional<Clock::duration> timeout = std::nullopt);
  /// Ends the child: SIGTERM (to its group when it has its own), up to `grace` for it to exit,
  /// then SIGKILL; reaps it. A zero grace sends SIGKILL at once. With its own group, the group
  /// gets SIGKILL at the end in any case, so no descendant outlives it. Returns the status.
  ExitStatus terminate(Clock::duration grace);
  /// Sends `sig` to the child's process group (even after the leader was reaped: descendants
  /// may remain), or to the child itself while unreaped when it has no group of its own.
  void kill_group(int sig);

 private:
  void close_all() noexcept;

  pid_t pid_ = -1;
  bool own_group_ = false;
  bool reaped_ = false;
  ExitStatus status_;
  int in_ = -1, out_ = -1, err_ = -1;
};

/// What run_captured saw.
struct CapturedRun {
  ExitStatus status;
  bool timed_out = false;  ///< the deadline passed and the child was terminated
  bool cancelled = false;  ///< `cancelled` said so and the child (and its group) was terminated
  std::string out, err;    ///< stdout and stderr, each cut at the cap
};

/// Runs `options` (its `out` and `err` are made pipes) to the end, reading stdout and stderr as
/// they come and keeping at most `cap_bytes` of each (the rest is read and dropped). When
/// `timeout_s` > 0 and both pipes are still open at the deadline, the child is terminate()d with
/// `kill_grace`. With new_process_group, the group gets SIGKILL once the child has ended:
/// descendants left behind are not kept. `cancelled`, when given, is asked every 50 ms: true
/// terminate()s the child (and its group) the same way and returns with CapturedRun::cancelled
/// (the caller's Ctrl-C or SIGTERM). Errors: those of Subprocess::spawn.
Expected<CapturedRun> run_captured(SpawnOptions options, double timeout_s,
                                   Subprocess::Clock::duration kill_grace, size_t cap_bytes,
                                   const std::function<bool()>& cancelled = {});

/// Whether `p` is a regular file this process may execute (where onnxdbg looks for its worker,
/// its CLI and the programs it starts).
bool is_executable_file(const std::filesystem::path& p);

/// The first `cap_bytes` bytes of file `p`, such as a child's stdout or stderr written to a file;
/// "" when it cannot be read. Allocates no more than the file holds.
std::string read_file_head(const std::filesystem::path& p, size_t cap_bytes);

/// The last non-blank line of a command's output `text`, trimmed, cut to `max_chars` (plus
/// "..."); "" when the text is blank. Shown beside a check's exit code, a job's error, a log.
std::string last_line(const std::string& text, size_t max_chars = 160);

}  // namespace onnxdbg
