// Tests of core/run_limits.h: overflow-checked tensor sizes, the one-sentence refusal naming a
// tensor over the memory limit, Tensor::make consulting the installed limit, and the deadline
// and cancel flag that long loops poll (nested scopes keep the sooner deadline).
#include "core/run_limits.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "onnxdbg/tensor.h"

namespace onnxdbg {
namespace {

TEST(RunLimits, TensorBytesChecksOverflow) {
  EXPECT_EQ(*tensor_bytes(DType::kFloat, {2, 3}), 24u);
  EXPECT_EQ(*tensor_bytes(DType::kFloat, {}), 4u);
  EXPECT_EQ(*tensor_bytes(DType::kFloat, {100000, 100000, 100}), uint64_t{4000000000000});
  // 2^62 elements fit in 64 bits, their 2^64 bytes do not.
  auto huge = tensor_bytes(DType::kFloat, {2147483647, 2147483647, 4});
  ASSERT_FALSE(huge.has_value());
  EXPECT_NE(huge.status().message().find("float32[2147483647,2147483647,4]"), std::string::npos)
      << huge.status().message();
  EXPECT_FALSE(tensor_bytes(DType::kFloat, {-1}).has_value());
  EXPECT_EQ(tensor_type_string(DType::kInt64, {}), "int64[]");
}

TEST(RunLimits, RefusalIsOneSentenceNamingTheTensor) {
  Status st =
      check_tensor_memory("input 'x'", DType::kFloat, {100000, 100000, 100}, uint64_t{1} << 30);
  ASSERT_FALSE(st.is_ok());
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "input 'x' float32[100000,100000,100] needs 3.64 TiB, more than the memory limit of "
            "1 GiB (--max-memory)");
  EXPECT_TRUE(check_tensor_memory("input 'x'", DType::kFloat, {256}, 1024).is_ok());
  // No limit given: the default share of the memory available, which no 2^62-element tensor fits.
  EXPECT_FALSE(check_tensor_memory("input 'y'", DType::kFloat, {2147483647, 2147483647}, 0));
  EXPECT_GT(default_memory_limit(), 0u);
}

TEST(RunLimits, TensorMakeConsultsTheInstalledLimit) {
  RunLimits l;
  l.max_memory = 1000;
  {
    ScopedRunLimits scope(l);
    auto t = Tensor::make(DType::kFloat, {1000});
    ASSERT_FALSE(t.has_value());
    EXPECT_NE(t.status().message().find("float32[1000] needs"), std::string::npos)
        << t.status().message();
    EXPECT_TRUE(Tensor::make(DType::kFloat, {250}).has_value());
  }
  EXPECT_TRUE(Tensor::make(DType::kFloat, {1000}).has_value());  // the scope ended
}

TEST(RunLimits, DeadlineAndCancelFlag) {
  EXPECT_FALSE(run_should_stop());  // nothing installed
  EXPECT_TRUE(check_run_limits().is_ok());
  RunLimits l;
  l.timeout_seconds = 0.05;
  ScopedRunLimits scope(l);
  EXPECT_FALSE(run_should_stop());
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_TRUE(run_should_stop());
  Status st = check_run_limits();
  EXPECT_EQ(st.code(), ErrorCode::kBackendError);
  EXPECT_EQ(st.message(), "timed out after 0.05 s");
  {
    // An inner scope with a later deadline keeps the outer, sooner one.
    RunLimits inner;
    inner.timeout_seconds = 100;
    ScopedRunLimits nested(inner);
    EXPECT_EQ(check_run_limits().message(), "timed out after 0.05 s");
  }
  std::atomic<bool> flag{false};
  RunLimits c;
  c.cancel = &flag;
  // A fresh thread has no limits of its own; it gets these below.
  std::thread([&] {
    ScopedRunLimits cs(c);
    EXPECT_FALSE(run_should_stop());
    flag = true;
    EXPECT_TRUE(run_should_stop());
    EXPECT_EQ(check_run_limits().code(), ErrorCode::kCancelled);
  }).join();
}

TEST(RunLimits, ParsesMemorySizes) {
  EXPECT_EQ(*parse_memory_size("4G"), 4000000000u);
  EXPECT_EQ(*parse_memory_size("512MiB"), uint64_t{512} << 20);
  EXPECT_FALSE(parse_memory_size("lots").has_value());
}

// Issue 39: the room the process's own limits leave, and which of them binds.
TEST(RunLimits, MemoryRoomIsTheSmallestLimitLeft) {
  ProcessMemoryFacts none;
  EXPECT_EQ(memory_room(none).bytes, kNoMemoryLimit);
  EXPECT_EQ(memory_room(none).limit, "");
  ProcessMemoryFacts f;
  f.address_space_limit = uint64_t{4} << 30;
  f.address_space_used = uint64_t{1} << 30;
  MemoryRoom r = memory_room(f);
  EXPECT_EQ(r.bytes, uint64_t{3} << 30);
  EXPECT_EQ(r.limit, "its address-space limit of 4 GiB (ulimit -v)");
  f.cgroup_limit = uint64_t{2} << 30;
  f.cgroup_used = uint64_t{1} << 29;
  r = memory_room(f);
  EXPECT_EQ(r.bytes, uint64_t{3} << 29);
  EXPECT_EQ(r.limit, "its cgroup's memory limit of 2 GiB (memory.max)");
  f.data_limit = 100;
  f.data_used = 200;  // already above: no room at all
  r = memory_room(f);
  EXPECT_EQ(r.bytes, 0u);
  EXPECT_EQ(r.limit, "its data limit of 100 B (ulimit -d)");
}

// Under a real `ulimit -v` (set in a child process), an 8 GiB tensor that the default limit (a
// share of the machine's memory) would let through is refused naming the address-space limit,
// before anything is allocated.
TEST(RunLimits, TheAddressSpaceLimitBindsBeforeTheDefault) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer maps terabytes of shadow memory: no room under ulimit -v";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "AddressSanitizer maps terabytes of shadow memory: no room under ulimit -v";
#endif
#endif
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const rlimit rl{uint64_t{4} << 30, uint64_t{4} << 30};
    if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(3);
    const Status st = check_tensor_memory("input 'x'", DType::kFloat, {2, 1024, 1024, 1024}, 0);
    const std::string want = "input 'x' float32[2,1024,1024,1024] needs 8 GiB, more than the ";
    const std::string tail =
        " this process can still allocate under its address-space limit of 4 GiB (ulimit -v)";
    const std::string& m = st.message();
    const bool ok = !st.is_ok() && m.rfind(want, 0) == 0 && m.size() > tail.size() &&
                    m.compare(m.size() - tail.size(), tail.size(), tail) == 0;
    if (!ok) fprintf(stderr, "got: %s\n", m.c_str());
    // What the limit leaves still takes a 64 MiB tensor.
    const bool small_ok = check_tensor_memory("t", DType::kFloat, {16, 1024, 1024}, 0).is_ok();
    _exit(ok && small_ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace onnxdbg
