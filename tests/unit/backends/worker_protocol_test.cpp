// The worker protocol's framing over a real pipe: tensors, values of every kind and headers
// round-trip, a closed pipe reads as EOF, a silent peer times out, garbage and malformed value
// descriptions are refused, and writing to a dead reader gives EOF instead of killing the process
// with SIGPIPE.
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

TEST(WorkerProtocol, ValuesOfEveryKindRoundTrip) {
  Pipe p;
  Map m{Tensor::from_vector<int64_t>({2}, {3, 9}), Tensor::from_vector<float>({2}, {0.25f, 0.75f})};
  Sequence maps;
  maps.elem_type = DType::kFloat;
  maps.map_key_type = DType::kInt64;
  maps.maps = {m, m};
  const ValueMap values = {
      {"t", Tensor::from_vector<float>({2}, {1, 2})},
      {"s", testing::sequence_of(DType::kInt64, {Tensor::from_vector<int64_t>({1}, {4}),
                                                 Tensor::from_vector<int64_t>({2, 1}, {5, 6})})},
      {"empty_seq", testing::sequence_of(DType::kDouble, {})},
      {"strings",
       testing::sequence_of(DType::kString, {Tensor::from_vector<std::string>({1}, {"ab"})})},
      {"opt_t", Value::optional_of(Tensor::scalar<int32_t>(7))},
      {"opt_s", Value::optional_of(
                    testing::sequence_of(DType::kFloat, {Tensor::from_vector<float>({1}, {8})}))},
      {"none", Value::none()},
      {"map", m},
      {"maps", maps},
  };
  std::thread writer([&] {
    EXPECT_EQ(write_value_frame(p.w, {{"type", "run_values"}}, values, in_seconds(5)).result,
              IoResult::kOk);
  });
  Frame f;
  const IoOutcome o = read_frame(p.r, &f, in_seconds(5));
  writer.join();
  ASSERT_EQ(o.result, IoResult::kOk) << o.error;
  EXPECT_EQ(f.header["type"], "run_values");
  EXPECT_TRUE(f.tensors.empty());
  ASSERT_EQ(f.values.size(), values.size());
  testing::expect_tensor_near(f.values.at("t").tensor(), {2}, {1, 2});

  const Sequence& s = f.values.at("s").sequence();
  EXPECT_EQ(s.elem_type, DType::kInt64);
  ASSERT_EQ(s.tensors.size(), 2u);
  testing::expect_tensor_near(s.tensors[0], {1}, {4});
  testing::expect_tensor_near(s.tensors[1], {2, 1}, {5, 6});

  ASSERT_TRUE(f.values.at("empty_seq").is_sequence());
  EXPECT_EQ(f.values.at("empty_seq").sequence().elem_type, DType::kDouble);
  EXPECT_EQ(f.values.at("empty_seq").sequence().size(), 0u);
  EXPECT_EQ(f.values.at("strings").sequence().tensors.at(0).strings(),
            (std::vector<std::string>{"ab"}));

  const Value& opt_t = f.values.at("opt_t");
  ASSERT_TRUE(opt_t.has_element());
  EXPECT_EQ(opt_t.element().tensor().dtype(), DType::kInt32);
  testing::expect_tensor_near(opt_t.element().tensor(), {}, {7});
  const Value& opt_s = f.values.at("opt_s");
  ASSERT_TRUE(opt_s.has_element());
  ASSERT_TRUE(opt_s.element().is_sequence());
  testing::expect_tensor_near(opt_s.element().sequence().tensors.at(0), {1}, {8});
  EXPECT_TRUE(f.values.at("none").is_optional());
  EXPECT_FALSE(f.values.at("none").has_element());

  const Map& back = f.values.at("map").map();
  testing::expect_tensor_near(back.keys, {2}, {3, 9});
  testing::expect_tensor_near(back.values, {2}, {0.25, 0.75});
  const Sequence& maps_back = f.values.at("maps").sequence();
  EXPECT_EQ(maps_back.map_key_type, DType::kInt64);
  ASSERT_EQ(maps_back.maps.size(), 2u);
  testing::expect_tensor_near(maps_back.maps[1].values, {2}, {0.25, 0.75});
}

TEST(WorkerProtocol, UncarriableValueIsAnError) {
  Pipe p;
  // Value::optional_of refuses this by assertion; the Optional constructor does not check.
  const ValueMap nested = {{"x", Value(Optional{{Value::none()}})}};
  const IoOutcome o = write_value_frame(p.w, {}, nested, in_seconds(1));
  EXPECT_EQ(o.result, IoResult::kError);
  EXPECT_NE(o.error.find("value 'x'"), std::string::npos) << o.error;
}

/// Writes a frame with header `header` (as given) and `payload` by hand, then reads it back.
IoOutcome read_handmade(const std::string& header, const std::string& payload = "") {
  Pipe p;
  std::string bytes = "ODBW";
  const auto header_bytes = static_cast<uint32_t>(header.size());
  const auto payload_bytes = static_cast<uint64_t>(payload.size());
  bytes.append(reinterpret_cast<const char*>(&header_bytes), 4);
  bytes.append(reinterpret_cast<const char*>(&payload_bytes), 8);
  bytes += header + payload;
  EXPECT_EQ(write(p.w, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  Frame f;
  return read_frame(p.r, &f, in_seconds(1));
}

TEST(WorkerProtocol, MalformedValuesAreRefused) {
  // One float32[1] tensor named "0" in the payload.
  const std::string tensor0 = R"("tensors": [{"name": "0", "bytes": 4, "dtype": 1, "shape": [1]}])";
  const std::string payload(4, '\0');
  EXPECT_EQ(read_handmade(R"({"values": {"x": {"tensor": "0"}}, )" + tensor0 + "}", payload).result,
            IoResult::kOk);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"values": [1], )", "not an object"},
      {R"({"values": {"x": 5}, )", "not a value description"},
      {R"({"values": {"x": {"weird": "0"}}, )", "not a value description"},
      {R"({"values": {"x": {"tensor": "1"}}, )", "lacks or gave already"},
      {R"({"values": {"x": {"tensor": "0"}, "y": {"tensor": "0"}}, )", "lacks or gave already"},
      {R"({"values": {}, )", "belongs to no value"},
      {R"({"values": {"x": {"sequence": ["0"], "elem_type": 7}}, )", "holds a float32 tensor"},
      {R"({"values": {"x": {"sequence": ["0"], "elem_type": 99}}, )", "unknown element type"},
      {R"({"values": {"x": {"sequence": "0", "elem_type": 1}}, )", "not an array"},
      {R"({"values": {"x": {"sequence": ["0"]}}, )", "malformed frame header"},
      {R"({"values": {"x": {"optional": {"optional": null}}}, )", "optional holding an optional"},
      {R"({"values": {"x": {"optional": {"map": {"keys": "0", "values": "0"}}}}, )",
       "optional holding a map"},
      {R"({"values": {"x": {"map": {"keys": "0", "values": "0"}}}, )", "lacks or gave already"},
      {R"({"values": {"x": {"tensor": 0}}, )", "malformed frame header"},
  };
  for (const auto& [header, why] : bad) {
    const IoOutcome o = read_handmade(header + tensor0 + "}", payload);
    EXPECT_EQ(o.result, IoResult::kError) << header;
    EXPECT_NE(o.error.find(why), std::string::npos) << header << " -> " << o.error;
  }
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
