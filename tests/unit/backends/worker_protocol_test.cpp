// The worker protocol's framing over a real pipe: tensors and headers round-trip, a closed pipe
// reads as EOF, a silent peer times out, garbage is refused, and writing to a dead reader gives
// EOF instead of killing the process with SIGPIPE.
#include "backends/worker_protocol.h"

#include <fcntl.h>
#include <unistd.h>

#include <thread>

#include "../test_util.h"

namespace onnxdbg::worker {
namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
};

Deadline in_seconds(double s) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

TEST(WorkerProtocol, FrameRoundTrips) {
  Pipe p;
  TensorMap tensors = {{"a", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                       {"b", Tensor::from_vector<std::string>({2}, {"x", "yz"})},
                       {"c", Tensor::scalar<int64_t>(-5)},
                       {"d", Tensor(DType::kFloat, {0, 4})}};
  // Write from another thread: the frame is larger than a pipe buffer would need to be.
  std::thread writer([&] {
    EXPECT_EQ(write_frame(p.w, {{"type", "run"}, {"n", 7}}, tensors, in_seconds(5)).result,
              IoResult::kOk);
  });
  Frame f;
  const IoOutcome o = read_frame(p.r, &f, in_seconds(5));
  writer.join();
  ASSERT_EQ(o.result, IoResult::kOk) << o.error;
  EXPECT_EQ(f.header["type"], "run");
  EXPECT_EQ(f.header["n"], 7);
  ASSERT_EQ(f.tensors.size(), 4u);
  testing::expect_tensor_near(f.tensors.at("a"), {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(f.tensors.at("b").strings(), (std::vector<std::string>{"x", "yz"}));
  testing::expect_tensor_near(f.tensors.at("c"), {}, {-5});
  EXPECT_EQ(f.tensors.at("d").shape(), (Shape{0, 4}));
}

TEST(WorkerProtocol, SinkGetsEachTensorInPayloadOrder) {
  Pipe p;
  TensorMap tensors = {{"a", Tensor::from_vector<float>({2}, {1, 2})},
                       {"b", Tensor::from_vector<std::string>({1}, {"s"})},
                       {"c", Tensor::scalar<int64_t>(3)}};
  std::thread writer([&] {
    EXPECT_EQ(write_frame(p.w, {{"ok", true}}, tensors, in_seconds(5)).result, IoResult::kOk);
  });
  std::vector<std::string> seen;
  TensorMap kept;
  const TensorSink sink = [&](const std::string& name, Tensor&& t) {
    seen.push_back(name);
    kept.emplace(name, std::move(t));
  };
  Frame f;
  const IoOutcome o = read_frame(p.r, &f, in_seconds(5), &sink);
  writer.join();
  ASSERT_EQ(o.result, IoResult::kOk) << o.error;
  EXPECT_TRUE(f.tensors.empty());
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"}));
  testing::expect_tensor_near(kept.at("a"), {2}, {1, 2});
  EXPECT_EQ(kept.at("b").strings(), (std::vector<std::string>{"s"}));
  testing::expect_tensor_near(kept.at("c"), {}, {3});
}

TEST(WorkerProtocol, LargeFrameThroughNonBlockingPipe) {
  Pipe p;
  fcntl(p.w, F_SETFL, fcntl(p.w, F_GETFL) | O_NONBLOCK);
  fcntl(p.r, F_SETFL, fcntl(p.r, F_GETFL) | O_NONBLOCK);
  std::vector<float> big(1 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i);
  std::thread writer([&] {
    EXPECT_EQ(write_frame(p.w, {{"type", "x"}},
                          {{"big", Tensor::from_vector<float>({1 << 20}, big)}}, in_seconds(10))
                  .result,
              IoResult::kOk);
  });
  Frame f;
  const IoOutcome o = read_frame(p.r, &f, in_seconds(10));
  writer.join();
  ASSERT_EQ(o.result, IoResult::kOk) << o.error;
  const Tensor& t = f.tensors.at("big");
  ASSERT_EQ(t.numel(), 1 << 20);
  EXPECT_EQ(t.data<float>()[12345], 12345.0f);
}

TEST(WorkerProtocol, ClosedPipeIsEof) {
  Pipe p;
  close(p.w);
  p.w = -1;
  Frame f;
  EXPECT_EQ(read_frame(p.r, &f, in_seconds(1)).result, IoResult::kEof);
}

TEST(WorkerProtocol, SilentPeerTimesOut) {
  Pipe p;
  Frame f;
  const auto t0 = Clock::now();
  EXPECT_EQ(read_frame(p.r, &f, in_seconds(0.2)).result, IoResult::kTimeout);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 2.0);
}

TEST(WorkerProtocol, GarbageIsRefused) {
  Pipe p;
  const char junk[] = "hello, this is not a frame at all";
  ASSERT_EQ(write(p.w, junk, sizeof junk), static_cast<ssize_t>(sizeof junk));
  Frame f;
  const IoOutcome o = read_frame(p.r, &f, in_seconds(1));
  EXPECT_EQ(o.result, IoResult::kError);
  EXPECT_NE(o.error.find("magic"), std::string::npos);
}

TEST(WorkerProtocol, WritingToADeadReaderIsEofNotSigpipe) {
  Pipe p;
  close(p.r);
  p.r = -1;
  EXPECT_EQ(write_frame(p.w, {{"type", "run"}}, {}, in_seconds(1)).result, IoResult::kEof);
  EXPECT_EQ(write_frame(p.w, {{"type", "run"}}, {}, std::nullopt).result, IoResult::kEof);
}

TEST(WorkerProtocol, StatusAndInfoRoundTrip) {
  Status s = backend_error("boom");
  s.with_context("while running node n1");
  s.with_context("while running graph g");
  const Status back = status_from_json(status_to_json(s));
  EXPECT_EQ(back.code(), ErrorCode::kBackendError);
  EXPECT_EQ(back.message(), "boom");
  EXPECT_EQ(back.context(), s.context());
  EXPECT_EQ(status_from_json(nlohmann::json{{"code", 99}}).code(), ErrorCode::kInternal);

  SessionInfo info;
  info.load_seconds = 1.25;
  info.providers = {"CPUExecutionProvider"};
  info.warnings = {"w"};
  info.output_names = {"y", "z"};
  info.providers_requested = {"CUDAExecutionProvider", "CPUExecutionProvider"};
  info.provider_node_counts = {{"CPUExecutionProvider", 2}};
  info.node_placement = {{"mm", "MatMul", "CPUExecutionProvider"},
                         {"", "Relu", "CPUExecutionProvider"}};
  info.provider_warnings = {"cuda missing"};
  const SessionInfo b = info_from_json(info_to_json(info));
  EXPECT_EQ(b.providers_requested, info.providers_requested);
  EXPECT_EQ(b.provider_node_counts, info.provider_node_counts);
  EXPECT_EQ(b.provider_warnings, info.provider_warnings);
  ASSERT_EQ(b.node_placement.size(), 2u);
  EXPECT_EQ(b.node_placement[0].node, "mm");
  EXPECT_EQ(b.node_placement[1].op_type, "Relu");
  EXPECT_EQ(b.node_placement[1].provider, "CPUExecutionProvider");
  EXPECT_EQ(b.load_seconds, 1.25);
  EXPECT_EQ(b.providers, info.providers);
  EXPECT_EQ(b.warnings, info.warnings);
  EXPECT_EQ(b.output_names, info.output_names);
}

}  // namespace
}  // namespace onnxdbg::worker
