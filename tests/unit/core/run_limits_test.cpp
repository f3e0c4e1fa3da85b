// Tests of core/run_limits.h: overflow-checked tensor sizes, the one-sentence refusal naming a
// tensor over the memory limit, Tensor::make consulting the installed limit, and the deadline
// and cancel flag that long loops poll (nested scopes keep the sooner deadline).
#include "core/run_limits.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/tensor.h"

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

}  // namespace
}  // namespace onnxdbg
