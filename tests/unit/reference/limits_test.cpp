// Hostile models on the reference interpreter (issue 17 items 6 and 9, issue 39): a Loop of 2^62
// trips ends at the timeout or at --max-iterations, and says where it is when nothing bounds it; an
// AveragePool whose kernel_shape makes the work absurd and a ConvTranspose whose dilations overflow
// the output size are refused before they start, and initializers and node outputs over the memory
// limit are refused by name before they are allocated.
#include <atomic>
#include <chrono>
#include <mutex>

#include "../test_util.h"
#include "core/run_limits.h"
#include "reference/interpreter.h"

namespace onnxdbg {
namespace {

using testing::parse_text_model;

// Runs `model` with `options`, expecting an error; its text, context included.
std::string run_error(const onnx::ModelProto& model, const reference::InterpreterOptions& options,
                      const std::map<std::string, Tensor>& inputs) {
  auto in = reference::Interpreter::create(model, {}, options);
  if (!in) return in.status().to_string();
  auto out = (*in)->run(inputs);
  EXPECT_FALSE(out.has_value()) << "expected the run to fail";
  return out ? std::string() : out.status().to_string();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A Loop of 2^62 trips over a body of two Identity nodes.
const char* kSpinModel = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1] x) => (float[1] y) {
      trips = Constant<value = int64 {4611686018427387904}>()
      cond = Constant<value = bool {1}>()
      y = Loop(trips, cond, x) <
        body = body_g (int64 i, bool c_in, float[1] a_in) => (bool c_out, float[1] a_out) {
          c_out = Identity(c_in)
          a_out = Identity(a_in)
        }
      >
    })";

TEST(ReferenceLimits, LoopOfTwoToThe62TripsTimesOut) {
  auto m = parse_text_model(kSpinModel);
  reference::InterpreterOptions options;
  options.timeout_seconds = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string err = run_error(m, options, {{"x", Tensor::from_vector<float>({1}, {1})}});
  EXPECT_LT(seconds_since(t0), 5.0);
  EXPECT_NE(err.find("timed out after 0.5 s"), std::string::npos) << err;
  EXPECT_NE(err.find("Loop"), std::string::npos) << err;
}

TEST(ReferenceLimits, MaxIterationsStopsALoopNamingItsBound) {
  auto m = parse_text_model(kSpinModel);
  reference::InterpreterOptions options;
  options.max_iterations = 1000;
  const std::string err = run_error(m, options, {{"x", Tensor::from_vector<float>({1}, {1})}});
  EXPECT_NE(err.find("reached 1000 iterations, the bound --max-iterations sets (its trip count is "
                     "4611686018427387904)"),
            std::string::npos)
      << err;
  // A Loop within the bound runs.
  auto small = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1] x) => (float[1] y) {
      trips = Constant<value = int64 {3}>()
      cond = Constant<value = bool {1}>()
      y = Loop(trips, cond, x) <
        body = body_g (int64 i, bool c_in, float[1] a_in) => (bool c_out, float[1] a_out) {
          c_out = Identity(c_in)
          a_out = Add(a_in, a_in)
        }
      >
    })");
  options.max_iterations = 3;
  auto in = reference::Interpreter::create(small, {}, options);
  ASSERT_TRUE(in.has_value()) << in.status().to_string();
  auto out = (*in)->run({{"x", Tensor::from_vector<float>({1}, {1})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(out->at("y").data<float>()[0], 8.0f);
}

// A run with a progress callback and nothing bounding it: a Loop whose trip count times its
// body is beyond what can finish is announced at once (not after 10 s), naming the node, the
// iteration and how to bound it; Ctrl-C (the cancel flag) then stops it.
TEST(ReferenceLimits, ARunawayLoopSaysWhereItIsAndHowToBoundIt) {
  auto m = parse_text_model(kSpinModel);
  auto in = reference::Interpreter::create(m, {}, {});
  ASSERT_TRUE(in.has_value()) << in.status().to_string();
  std::mutex mu;
  std::vector<std::string> lines;
  std::atomic<bool> cancel{false};
  const std::function<void(const std::string&)> progress = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
    cancel = true;  // as a user who read it and pressed Ctrl-C
  };
  RunLimits limits;
  limits.progress = &progress;
  limits.cancel = &cancel;
  ScopedRunLimits scope(limits);
  const auto t0 = std::chrono::steady_clock::now();
  auto out = (*in)->run({{"x", Tensor::from_vector<float>({1}, {1})}});
  EXPECT_LT(seconds_since(t0), 5.0);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), ErrorCode::kCancelled) << out.status().to_string();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "note: Loop may run 4,611,686,018,427,387,904 iterations (its trip count; its "
            "condition may end it sooner) and nothing bounds this run: stop it with Ctrl-C, or run "
            "again with --timeout SECONDS or --max-iterations N");
  EXPECT_NE(lines[1].find("the reference is at node #2 Loop, iteration "), std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find(" of 4,611,686,018,427,387,904 (0 s)"), std::string::npos) << lines[1];
}

TEST(ReferenceLimits, AveragePoolWithAbsurdKernelIsRefusedBeforeItStarts) {
  const Tensor x(DType::kFloat, {1, 1, 4, 4});
  for (const char* attrs : {R"(auto_pad = "SAME_UPPER")", "pads = [0, 0, 0, 0], strides = [1, 1]",
                            "pads = [0, 4611686018427387904, 0, 4611686018427387904]"}) {
    auto m = parse_text_model(std::string(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[1,1,4,4] x) => (float[1,1,N,M] y) {
        y = AveragePool<kernel_shape = [2, 4611686018427387904], )") +
                              attrs + R"(>(x)
      })");
    reference::InterpreterOptions options;
    options.timeout_seconds = 60;  // a hang would end here, not never
    const auto t0 = std::chrono::steady_clock::now();
    const std::string err = run_error(m, options, {{"x", x}});
    EXPECT_LT(seconds_since(t0), 5.0) << attrs;
    EXPECT_NE(err.find("AveragePool"), std::string::npos) << err;
    EXPECT_NE(err.find("[2, 4611686018427387904]"), std::string::npos) << err;
    EXPECT_EQ(err.find("timed out"), std::string::npos) << err;
  }
}

TEST(ReferenceLimits, ConvTransposeWithOverflowingDilationsIsRefused) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,4,4] x, float[1,1,3,3] w) => (float[1,1,N,M] y) {
      y = ConvTranspose<dilations = [1, 4611686018427387904]>(x, w)
    })");
  const std::string err = run_error(
      m, {},
      {{"x", Tensor(DType::kFloat, {1, 1, 4, 4})}, {"w", Tensor(DType::kFloat, {1, 1, 3, 3})}});
  EXPECT_NE(err.find("ConvTranspose"), std::string::npos) << err;
  EXPECT_NE(err.find("dilations [1, 4611686018427387904]"), std::string::npos) << err;
  EXPECT_NE(err.find("refused before running"), std::string::npos) << err;
}

TEST(ReferenceLimits, NodeOutputOverTheLimitIsRefusedByNode) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1] x, int64[2] s) => (float[N,M] y) {
      y = Expand(x, s)
    })");
  reference::InterpreterOptions options;
  options.max_memory = uint64_t{1} << 20;
  const Tensor x = Tensor::from_vector<float>({1}, {1});
  std::string err =
      run_error(m, options, {{"x", x}, {"s", Tensor::from_vector<int64_t>({2}, {1000, 1000})}});
  EXPECT_NE(err.find("float32[1000,1000] needs 3.81 MiB, more than the memory limit of 1 MiB "
                     "(--max-memory)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("Expand"), std::string::npos) << err;
  // 2^62 elements with no limit given: refused, never std::bad_alloc.
  err = run_error(m, {},
                  {{"x", x}, {"s", Tensor::from_vector<int64_t>({2}, {2147483647, 2147483647})}});
  EXPECT_NE(err.find("2147483647x2147483647"), std::string::npos) << err;
  EXPECT_EQ(err.find("bad_alloc"), std::string::npos) << err;
  // Within the limit it runs.
  auto in = reference::Interpreter::create(m, {}, options);
  ASSERT_TRUE(in.has_value());
  EXPECT_TRUE(
      (*in)->run({{"x", x}, {"s", Tensor::from_vector<int64_t>({2}, {100, 100})}}).has_value());
}

TEST(ReferenceLimits, InitializerOverTheLimitIsRefusedBeforeReading) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1] x) => (float[1] y) {
      y = Identity(x)
    })");
  onnx::TensorProto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(100000);
  w->add_dims(100000);  // 40 GB declared, no data
  reference::InterpreterOptions options;
  options.max_memory = uint64_t{1} << 30;
  auto in = reference::Interpreter::create(m, {}, options);
  ASSERT_FALSE(in.has_value());
  EXPECT_NE(in.status().to_string().find("initializer 'w' float32[100000,100000] needs 37.3 GiB, "
                                         "more than the memory limit of 1 GiB (--max-memory)"),
            std::string::npos)
      << in.status().to_string();
}

}  // namespace
}  // namespace onnxdbg
