// write_file_atomic: a complete file or the old one, never a partial write (issue 17: on a full
// disk `view`, `surgeon sanitize` and `lint --html` replaced a valid file with 4 KB of output).
#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "test_util.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(AtomicFile, WritesAndReplaces) {
  TempDir dir = testing::make_temp_dir("onnxdbg_atomic_");
  const fs::path p = dir.path() / "out.bin";
  ASSERT_TRUE(write_file_atomic(p, "first").is_ok());
  ASSERT_TRUE(write_file_atomic(p, "second, longer").is_ok());
  EXPECT_EQ(read_all(p), "second, longer");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

// A write that fails midway (here: the file size limit, as a full disk would) leaves the old file
// as it was and no temporary file beside it, and says why.
TEST(AtomicFile, AFailedWriteKeepsTheOldFile) {
  TempDir dir = testing::make_temp_dir("onnxdbg_atomic_");
  const fs::path p = dir.path() / "model.onnx";
  ASSERT_TRUE(write_file_atomic(p, "the valid old file").is_ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing us
    rlimit lim{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &lim);
    const Status st = write_file_atomic(p, std::string(100000, 'x'));
    const bool says_why = st.message().find("File too large") != std::string::npos &&
                          st.message().find(p.string()) != std::string::npos;
    _exit(!st.is_ok() && says_why ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the write did not fail with a message naming the file";
  EXPECT_EQ(read_all(p), "the valid old file");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(AtomicFile, AMissingFolderIsAnError) {
  TempDir dir = testing::make_temp_dir("onnxdbg_atomic_");
  const Status st = write_file_atomic(dir.path() / "no" / "such" / "x.html", "x");
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("No such file or directory"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace onnxdbg
