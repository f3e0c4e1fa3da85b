// Tests of TempDir: a fresh private folder under $TMPDIR (or a given parent), removed with its
// contents when the owner dies (also while an exception unwinds), kept after release().
#include "core/temp_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

/// Sets an environment variable for the scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void write_file(const fs::path& p) { std::ofstream(p) << "x"; }

TEST(TempDir, CreatesAPrivateFolderAndRemovesItsTree) {
  fs::path p;
  {
    auto dir = TempDir::create("onnxdbg-tempdir-test-");
    ASSERT_TRUE(dir.has_value()) << dir.status().to_string();
    p = dir->path();
    EXPECT_EQ(p.filename().string().rfind("onnxdbg-tempdir-test-", 0), 0u) << p;
    EXPECT_EQ(p.parent_path(), fs::temp_directory_path());
    ASSERT_TRUE(fs::is_directory(p));
    struct stat st;
    ASSERT_EQ(stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    fs::create_directories(p / "a" / "b");
    write_file(p / "a" / "b" / "f.txt");
    write_file(p / "top.txt");
  }
  EXPECT_FALSE(fs::exists(p)) << p;
}

TEST(TempDir, TwoFoldersWithOnePrefixDiffer) {
  auto a = TempDir::create("onnxdbg-tempdir-test-");
  auto b = TempDir::create("onnxdbg-tempdir-test-");
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->path(), b->path());
}

TEST(TempDir, RemovedWhileAnExceptionUnwinds) {
  fs::path p;
  try {
    auto dir = TempDir::create("onnxdbg-tempdir-test-");
    ASSERT_TRUE(dir.has_value()) << dir.status().to_string();
    p = dir->path();
    write_file(p / "f.txt");
    throw std::runtime_error("unwind");
  } catch (const std::runtime_error&) {
  }
  ASSERT_FALSE(p.empty());
  EXPECT_FALSE(fs::exists(p)) << p;
}

TEST(TempDir, HonoursTmpdir) {
  auto parent = TempDir::create("onnxdbg-tempdir-parent-");
  ASSERT_TRUE(parent.has_value()) << parent.status().to_string();
  ScopedEnv env("TMPDIR", parent->path().string());
  auto dir = TempDir::create("child-");
  ASSERT_TRUE(dir.has_value()) << dir.status().to_string();
  EXPECT_EQ(dir->path().parent_path(), parent->path());
}

TEST(TempDir, GivenParentWinsOverTmpdir) {
  auto a = TempDir::create("onnxdbg-tempdir-a-");
  auto b = TempDir::create("onnxdbg-tempdir-b-");
  ASSERT_TRUE(a && b);
  ScopedEnv env("TMPDIR", a->path().string());
  auto dir = TempDir::create("child-", b->path());
  ASSERT_TRUE(dir.has_value()) << dir.status().to_string();
  EXPECT_EQ(dir->path().parent_path(), b->path());
}

TEST(TempDir, ReleaseKeepsTheFolder) {
  auto parent = TempDir::create("onnxdbg-tempdir-parent-");
  ASSERT_TRUE(parent.has_value()) << parent.status().to_string();
  fs::path kept;
  {
    auto dir = TempDir::create("kept-", parent->path());
    ASSERT_TRUE(dir.has_value());
    write_file(dir->path() / "f.txt");
    const fs::path p = dir->path();
    kept = dir->release();
    EXPECT_EQ(kept, p);
    EXPECT_TRUE(dir->path().empty());
  }
  EXPECT_TRUE(fs::exists(kept / "f.txt")) << kept;
}  // `parent` removes `kept` with itself

TEST(TempDir, MoveTransfersOwnership) {
  fs::path p;
  {
    auto dir = TempDir::create("onnxdbg-tempdir-test-");
    ASSERT_TRUE(dir.has_value());
    TempDir moved = std::move(*dir);
    p = moved.path();
    EXPECT_TRUE(dir->path().empty());
    { TempDir gone = std::move(moved); }
    EXPECT_FALSE(fs::exists(p)) << "the last owner removes it";
    auto other = TempDir::create("onnxdbg-tempdir-test-");
    ASSERT_TRUE(other.has_value());
    const fs::path q = other->path();
    TempDir assigned = std::move(*other);
    auto third = TempDir::create("onnxdbg-tempdir-test-");
    ASSERT_TRUE(third.has_value());
    const fs::path r = third->path();
    assigned = std::move(*third);  // q, owned before, goes now
    EXPECT_FALSE(fs::exists(q));
    EXPECT_TRUE(fs::exists(r));
    p = r;
  }
  EXPECT_FALSE(fs::exists(p));
}

TEST(TempDir, ErrorsNameTheFolder) {
  auto parent = TempDir::create("onnxdbg-tempdir-parent-");
  ASSERT_TRUE(parent.has_value());
  const fs::path missing = parent->path() / "no" / "such";
  auto dir = TempDir::create("x-", missing);
  ASSERT_FALSE(dir.has_value());
  EXPECT_EQ(dir.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(dir.status().message().find(missing.string()), std::string::npos)
      << dir.status().message();
  auto slash = TempDir::create("a/b-");
  ASSERT_FALSE(slash.has_value());
  EXPECT_EQ(slash.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace onnxdbg
