// Tests of Subprocess and run_captured on real processes: exit status and signals, pipes and
// files as standard streams, waits with a deadline, a timeout that kills a `sleep`, and killing a
// process group leaving no child behind.
#include "core/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/temp_dir.h"

namespace onnxdbg {
namespace {

using namespace std::chrono_literals;
using Clock = Subprocess::Clock;

SpawnOptions shell(const std::string& script) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", script};
  return o;
}

/// Reads `fd` to EOF.
std::string read_fd(int fd) {
  std::string out;
  char buf[4096];
  ssize_t got;
  while ((got = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(got));
  return out;
}

/// Whether process `pid` is gone (or a zombie, which no longer runs), waiting up to 5 s for it.
bool process_gone(pid_t pid) {
  const auto until = Clock::now() + 5s;
  for (;;) {
    if (::kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z')
      return true;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(10ms);
  }
}

TEST(Subprocess, ReportsTheExitCode) {
  auto p = Subprocess::spawn(shell("exit 7"));
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  const auto s = p->wait();
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->exited());
  EXPECT_EQ(s->exit_code(), 7);
  EXPECT_EQ(s->signal(), 0);
  EXPECT_TRUE(p->reaped());
}

TEST(Subprocess, ReportsTheSignalThatEndedIt) {
  auto p = Subprocess::spawn(shell("kill -SEGV $$"));
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  const auto s = p->wait();
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->signaled());
  EXPECT_EQ(s->signal(), SIGSEGV);
  EXPECT_EQ(s->exit_code(), -1);
}

TEST(Subprocess, PipesStdinToStdout) {
  SpawnOptions o;
  o.argv = {"cat"};
  o.search_path = true;
  o.in = Stdio::pipe();
  o.out = Stdio::pipe();
  auto p = Subprocess::spawn(o);
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  ASSERT_GT(p->stdin_fd(), 2);
  ASSERT_GT(p->stdout_fd(), 2);
  EXPECT_EQ(p->stderr_fd(), -1);
  const std::string text = "hello, worker\n";
  ASSERT_EQ(write(p->stdin_fd(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  p->close_stdin();
  EXPECT_EQ(read_fd(p->stdout_fd()), text);
  const auto s = p->wait();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->exit_code(), 0);
}

TEST(Subprocess, WritesStreamsToFilesAndSetsTheEnvironment) {
  auto dir = TempDir::create("onnxdbg-subprocess-test-");
  ASSERT_TRUE(dir.has_value()) << dir.status().to_string();
  SpawnOptions o = shell("echo \"$ODB_A $ODB_B\"; echo oops >&2; read line; echo \"$line\"");
  o.environment = std::vector<std::string>{"ODB_A=a", "PATH=/usr/bin:/bin"};
  o.extra_environment = {"ODB_B=b"};
  { std::ofstream(dir->path() / "in.txt") << "from a file\n"; }
  o.in = Stdio::to_file(dir->path() / "in.txt");
  o.out = Stdio::to_file(dir->path() / "out.txt");
  o.err = Stdio::to_file(dir->path() / "err.txt");
  auto p = Subprocess::spawn(o);
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  ASSERT_EQ(p->wait()->exit_code(), 0);
  std::stringstream out, err;
  out << std::ifstream(dir->path() / "out.txt").rdbuf();
  err << std::ifstream(dir->path() / "err.txt").rdbuf();
  EXPECT_EQ(out.str(), "a b\nfrom a file\n");
  EXPECT_EQ(err.str(), "oops\n");
}

TEST(Subprocess, AMissingProgramIsNotFound) {
  SpawnOptions o;
  o.argv = {"onnxdbg-no-such-program-xyz"};
  o.search_path = true;
  auto p = Subprocess::spawn(o);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(p.status().message(), "No such file or directory");
  EXPECT_NE(p.status().to_string().find("onnxdbg-no-such-program-xyz"), std::string::npos);
  o.argv.clear();
  EXPECT_EQ(Subprocess::spawn(o).status().code(), ErrorCode::kInvalidArgument);
}

// `exec sleep`: a shell that forked its sleep would leave it running after the shell is killed,
// holding the test's output pipe, so that ctest waits out its 30 s.
TEST(Subprocess, WaitWithADeadlineLeavesARunningChild) {
  auto p = Subprocess::spawn(shell("exec sleep 30"));
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  const auto start = Clock::now();
  EXPECT_FALSE(p->wait(50ms).has_value());
  EXPECT_GE(Clock::now() - start, 50ms);
  EXPECT_FALSE(p->poll().has_value());
  EXPECT_FALSE(p->reaped());
  const pid_t pid = p->pid();
  const ExitStatus s = p->terminate(1s);
  EXPECT_EQ(s.signal(), SIGTERM) << "sleep exits on SIGTERM, before the grace ends";
  EXPECT_TRUE(p->reaped());
  EXPECT_TRUE(process_gone(pid));
}

TEST(Subprocess, TerminateFallsBackToSigkill) {
  // The shell ignores SIGTERM (and so does its exec'd sleep), so only SIGKILL ends it.
  auto p = Subprocess::spawn(shell("trap '' TERM; echo ready; exec sleep 30"));
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  std::this_thread::sleep_for(100ms);
  const auto start = Clock::now();
  const ExitStatus s = p->terminate(200ms);
  EXPECT_EQ(s.signal(), SIGKILL);
  EXPECT_GE(Clock::now() - start, 200ms) << "waited the grace first";
}

TEST(Subprocess, DestroyingARunningChildKillsIt) {
  pid_t pid = -1;
  {
    auto p = Subprocess::spawn(shell("exec sleep 30"));
    ASSERT_TRUE(p.has_value()) << p.status().to_string();
    pid = p->pid();
    Subprocess moved = std::move(*p);
    EXPECT_EQ(p->pid(), -1);
    EXPECT_EQ(moved.pid(), pid);
  }
  EXPECT_TRUE(process_gone(pid));
}

TEST(Subprocess, KillingTheGroupLeavesNoChild) {
  SpawnOptions o = shell("sleep 30 & echo $!; wait");
  o.out = Stdio::pipe();
  o.new_process_group = true;
  auto p = Subprocess::spawn(o);
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  EXPECT_EQ(getpgid(p->pid()), p->pid());
  std::string line;
  char c;
  while (read(p->stdout_fd(), &c, 1) == 1 && c != '\n') line += c;
  const pid_t child = static_cast<pid_t>(std::stol(line));
  ASSERT_GT(child, 0);
  EXPECT_EQ(getpgid(child), p->pid());
  const ExitStatus s = p->terminate(2s);
  EXPECT_TRUE(s.signaled());
  EXPECT_TRUE(process_gone(child)) << "the background sleep " << child << " outlived its group";
}

TEST(RunCaptured, CapturesBothStreamsAndTheExitCode) {
  auto r = run_captured(shell("printf out; printf err >&2; exit 3"), 10, 0s, 1 << 20);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->status.exit_code(), 3);
  EXPECT_EQ(r->out, "out");
  EXPECT_EQ(r->err, "err");
}

TEST(RunCaptured, CutsOutputAtTheCap) {
  auto r = run_captured(shell("head -c 100000 /dev/zero"), 10, 0s, 1000);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->status.exit_code(), 0);
  EXPECT_EQ(r->out.size(), 1000u);
}

TEST(RunCaptured, ATimeoutKillsASleep) {
  SpawnOptions o;
  o.argv = {"sleep", "30"};
  o.search_path = true;
  o.new_process_group = true;
  const auto start = Clock::now();
  auto r = run_captured(o, 0.3, 0s, 1 << 20);
  const auto took = Clock::now() - start;
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->status.signal(), SIGKILL);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 10s);
}

TEST(RunCaptured, AChildThatClosesItsPipesStillTimesOut) {
  auto r = run_captured(shell("exec >/dev/null 2>&1; sleep 30"), 0.3, 0s, 1 << 20);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->status.signal(), SIGKILL);
}

TEST(RunCaptured, DescendantsLeftInTheGroupAreKilled) {
  // The shell exits at once; its background sleep (stdout closed, so the pipes reach EOF) stays
  // in the group until run_captured kills it.
  SpawnOptions o = shell("sleep 30 >/dev/null 2>&1 & echo $!");
  o.new_process_group = true;
  auto r = run_captured(o, 10, 0s, 1 << 20);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->status.exit_code(), 0);
  const pid_t child = static_cast<pid_t>(std::stol(r->out));
  ASSERT_GT(child, 0);
  EXPECT_TRUE(process_gone(child)) << "the background sleep " << child << " outlived its group";
}

}  // namespace
}  // namespace onnxdbg
