// Isolation of third-party backends: crashes, aborts and hangs inside the worker (triggered by its
// debug_* test hooks) become kBackendError results and onnxdbg carries on; timeouts kill the
// worker; the worker is found via $ONNXDBG_WORKER or next to the running executable.
#include <chrono>

#include "backend_test_util.h"

namespace onnxdbg {
namespace {

using testing::isolated;
using testing::ModelDir;
using Clock = std::chrono::steady_clock;

const char* kAddModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
add (float[2,2] x, float[2,2] y) => (float[2,2] z) {
  z = Add(x, y)
}
)";

TensorMap add_inputs() {
  return {{"x", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})},
          {"y", Tensor::from_vector<float>({2, 2}, {10, 20, 30, 40})}};
}

double elapsed_seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Runs the add model on `backend` and checks the sum: proof that the backend still works.
void expect_add_works(Backend& backend, const std::filesystem::path& model) {
  auto session = backend.load(model);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto out = (*session)->run(add_inputs());
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  testing::expect_tensor_near(out->outputs.at("z"), {2, 2}, {11, 22, 33, 44});
}

TEST(Isolated, FindsWorkerNextToTestBinary) {
  auto exe = find_worker_executable();
  ASSERT_TRUE(exe.has_value()) << exe.status().to_string();
  EXPECT_NE(exe->find("onnxdbg-worker"), std::string::npos);
}

TEST(Isolated, WorkerEnvVariableWins) {
  const char* old = std::getenv("ONNXDBG_WORKER");
  const std::string saved = old ? old : "";
  setenv("ONNXDBG_WORKER", "/nonexistent/onnxdbg-worker", 1);
  auto exe = find_worker_executable();
  BackendSpec spec{"onnxruntime", {}};
  auto backend = make_isolated_backend(spec);
  ASSERT_TRUE(backend.has_value());
  ModelDir dir;
  auto session = (*backend)->load(dir.write_model(kAddModel));
  if (old)
    setenv("ONNXDBG_WORKER", saved.c_str(), 1);
  else
    unsetenv("ONNXDBG_WORKER");

  ASSERT_FALSE(exe.has_value());
  EXPECT_EQ(exe.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(exe.status().message().find("/nonexistent/onnxdbg-worker"), std::string::npos);
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), ErrorCode::kNotFound);
}

TEST(Isolated, WorkerThatExitsReportsItsExitCode) {
  // /bin/false stands in for a worker that dies at once: writing to it may hit EPIPE (which must
  // not kill us with SIGPIPE), reading gives EOF, and the exit code is reported.
  if (!std::filesystem::exists("/bin/false")) GTEST_SKIP() << "no /bin/false";
  const char* old = std::getenv("ONNXDBG_WORKER");
  const std::string saved = old ? old : "";
  setenv("ONNXDBG_WORKER", "/bin/false", 1);
  ModelDir dir;
  auto session = isolated("onnxruntime")->load(dir.write_model(kAddModel));
  if (old)
    setenv("ONNXDBG_WORKER", saved.c_str(), 1);
  else
    unsetenv("ONNXDBG_WORKER");
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), ErrorCode::kBackendError);
  EXPECT_NE(
      session.status().message().find("onnxruntime exited with code 1 while loading the model"),
      std::string::npos)
      << session.status().message();
}

TEST(Isolated, RefusesBackendsTheWorkerDoesNotRun) {
  auto b = make_isolated_backend(BackendSpec{"reference", {}});
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("onnxruntime"), std::string::npos);
}

TEST(Isolated, RefusesBadTimeout) {
  for (const char* bad : {"0", "-1", "abc", ""}) {
    auto b = make_isolated_backend(BackendSpec{"onnxruntime", {{"timeout", bad}}});
    ASSERT_FALSE(b.has_value()) << bad;
    EXPECT_EQ(b.status().code(), ErrorCode::kInvalidArgument);
  }
}

TEST(Isolated, SessionServesManyRuns) {
  ModelDir dir;
  auto backend = isolated("onnxruntime");
  auto session = backend->load(dir.write_model(kAddModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  for (int i = 0; i < 20; ++i) {
    TensorMap in = {{"x", Tensor::from_vector<float>({2, 2}, {1, 2, 3, static_cast<float>(i)})},
                    {"y", Tensor::from_vector<float>({2, 2}, {0, 0, 0, 1})}};
    const auto start = std::chrono::steady_clock::now();
    auto out = (*session)->run(in);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    testing::expect_tensor_near(out->outputs.at("z"), {2, 2}, {1, 2, 3, i + 1.0});
    // The worker's own measure of the run: sent (0 when missing), and within our round trip.
    EXPECT_GT(out->run_seconds, 0);
    EXPECT_LE(out->run_seconds, wall);
  }
}

TEST(Isolated, RunEachHandsOverEveryOutput) {
  ModelDir dir;
  // arena=off: ONNX Runtime without its memory arena (what layerwise runs use) gives the same.
  for (const char* arena : {"on", "off"}) {
    auto backend = isolated("onnxruntime", {{"arena", arena}});
    auto session = backend->load(dir.write_model(kAddModel));
    ASSERT_TRUE(session.has_value()) << session.status().to_string();
    std::map<std::string, Tensor> got;
    auto r = (*session)->run_each(add_inputs(), {}, [&](const std::string& name, Tensor&& t) {
      got.emplace(name, std::move(t));
    });
    ASSERT_TRUE(r.has_value()) << r.status().to_string();
    EXPECT_TRUE(r->outputs.empty());
    ASSERT_EQ(got.size(), 1u);
    testing::expect_tensor_near(got.at("z"), {2, 2}, {11, 22, 33, 44});
  }
}

TEST(Isolated, ReportsTheWorkersPeakMemory) {
  ModelDir dir;
  for (const char* spec : {"onnxruntime:threads=1", "opencv:threads=1"}) {
    auto parsed = BackendSpec::parse(spec);
    ASSERT_TRUE(parsed.has_value());
    auto backend = make_isolated_backend(*parsed);
    ASSERT_TRUE(backend.has_value()) << backend.status().to_string();
    auto session = (*backend)->load(dir.write_model(kAddModel));
    ASSERT_TRUE(session.has_value()) << session.status().to_string();
    EXPECT_TRUE((*session)->info().warnings.empty()) << spec;  // threads is a known option
    auto out = (*session)->run(add_inputs());
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    EXPECT_GT(out->peak_rss_bytes, 1 << 20) << spec;  // the worker holds at least a MiB
  }
}

TEST(Isolated, ClosingASessionReapsTheWorkerQuickly) {
  ModelDir dir;
  auto backend = isolated("onnxruntime");
  auto session = backend->load(dir.write_model(kAddModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  const auto t0 = Clock::now();
  session->reset();
  EXPECT_LT(elapsed_seconds(t0), 1.5);
}

TEST(Isolated, AReusedWorkerStillIsolatesCrashesAndReportsItsOwnPeak) {
  ModelDir dir;
  const auto model = dir.write_model(kAddModel);
  auto backend = isolated("onnxruntime");
  expect_add_works(*backend, model);  // its worker now waits for the next load
  auto crashing = make_isolated_backend(BackendSpec{"onnxruntime", {{"debug_crash", "load"}}});
  ASSERT_TRUE(crashing.has_value());
  auto session = (*crashing)->load(model);
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), ErrorCode::kBackendError);
  EXPECT_NE(session.status().message().find("crashed with SIGSEGV"), std::string::npos)
      << session.status().message();
  for (int i = 0; i < 3; ++i) {
    expect_add_works(*backend, model);  // a fresh worker, then the same one again
    auto s = backend->load(model);
    ASSERT_TRUE(s.has_value()) << s.status().to_string();
    auto out = (*s)->run(add_inputs());
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    EXPECT_GT(out->peak_rss_bytes, 1 << 20);
  }
}

TEST(Isolated, CrashWhileLoadingIsABackendError) {
  ModelDir dir;
  const auto model = dir.write_model(kAddModel);
  auto backend = isolated("onnxruntime", {{"debug_crash", "load"}});
  auto session = backend->load(model);
  ASSERT_FALSE(session.has_value());
  const Status& st = session.status();
  EXPECT_EQ(st.code(), ErrorCode::kBackendError);
  EXPECT_NE(st.message().find("onnxruntime crashed with SIGSEGV (segmentation fault) while loading "
                              "the model"),
            std::string::npos)
      << st.message();
  // The worker's last words on stderr are quoted.
  EXPECT_NE(st.message().find("debug_crash=load"), std::string::npos) << st.message();
  expect_add_works(*isolated("onnxruntime"), model);  // and we are still here
}

TEST(Isolated, CrashWhileRunningIsABackendError) {
  ModelDir dir;
  const auto model = dir.write_model(kAddModel);
  auto backend = isolated("onnxruntime", {{"debug_crash", "run"}});
  auto session = backend->load(model);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto out = (*session)->run(add_inputs());
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), ErrorCode::kBackendError);
  EXPECT_NE(out.status().message().find(
                "crashed with SIGSEGV (segmentation fault) while running the model"),
            std::string::npos)
      << out.status().message();
  // The dead session keeps saying why, without hanging.
  auto again = (*session)->run(add_inputs());
  ASSERT_FALSE(again.has_value());
  EXPECT_NE(again.status().message().find("SIGSEGV"), std::string::npos)
      << again.status().message();
  expect_add_works(*isolated("onnxruntime"), model);
}

TEST(Isolated, CrashInRunValuesIsABackendError) {
  ModelDir dir;
  const auto model = dir.write_model(kAddModel);
  auto session = isolated("onnxruntime", {{"debug_crash", "run"}})->load(model);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  ValueMap inputs;
  for (auto& [name, t] : add_inputs()) inputs.emplace(name, std::move(t));
  auto out = (*session)->run_values(inputs);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), ErrorCode::kBackendError);
  EXPECT_NE(out.status().message().find("SIGSEGV"), std::string::npos) << out.status().message();
  // A healthy worker gives the values back.
  auto ok = isolated("onnxruntime")->load(model);
  ASSERT_TRUE(ok.has_value()) << ok.status().to_string();
  auto values = (*ok)->run_values(inputs);
  ASSERT_TRUE(values.has_value()) << values.status().to_string();
  testing::expect_tensor_near(values->outputs.at("z").tensor(), {2, 2}, {11, 22, 33, 44});
}

TEST(Isolated, AbortIsReportedAsSigabrt) {
  ModelDir dir;
  auto backend = isolated("opencv", {{"debug_abort", "run"}});
  auto session = backend->load(dir.write_model(kAddModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto out = (*session)->run(add_inputs());
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("opencv aborted (SIGABRT) while running the model"),
            std::string::npos)
      << out.status().message();
}

TEST(Isolated, HangWhileRunningIsKilledAtTheTimeout) {
  ModelDir dir;
  auto backend = isolated("onnxruntime", {{"debug_hang", "run"}, {"timeout", "1"}});
  auto session = backend->load(dir.write_model(kAddModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  const auto t0 = Clock::now();
  auto out = (*session)->run(add_inputs());
  const double took = elapsed_seconds(t0);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), ErrorCode::kBackendError);
  EXPECT_NE(out.status().message().find(
                "onnxruntime did not finish running the model within 1 s; killed"),
            std::string::npos)
      << out.status().message();
  EXPECT_GE(took, 0.9);
  EXPECT_LT(took, 4.0);
  const auto t1 = Clock::now();
  session->reset();
  EXPECT_LT(elapsed_seconds(t1), 1.0);  // already killed and reaped
}

TEST(Isolated, HangWhileLoadingIsKilledAtTheTimeout) {
  ModelDir dir;
  IsolationOptions options;
  options.load_timeout_seconds = 0.5;
  auto backend = make_isolated_backend(BackendSpec{"opencv", {{"debug_hang", "load"}}}, options);
  ASSERT_TRUE(backend.has_value());
  const auto t0 = Clock::now();
  auto session = (*backend)->load(dir.write_model(kAddModel));
  ASSERT_FALSE(session.has_value());
  EXPECT_LT(elapsed_seconds(t0), 4.0);
  EXPECT_NE(session.status().message().find(
                "opencv did not finish loading the model within 0.5 s; killed"),
            std::string::npos)
      << session.status().message();
}

TEST(Isolated, DescribeAsksTheWorker) {
  EXPECT_EQ(isolated("opencv")->describe(), "OpenCV DNN 4.6.0");
  const std::string ort = isolated("onnxruntime")->describe();
  EXPECT_EQ(ort.rfind("ONNX Runtime 1.", 0), 0u) << ort;
  EXPECT_NE(ort.find("(CPU"), std::string::npos) << ort;
}

TEST(Isolated, MissingModelFileIsAnErrorNotACrash) {
  auto session = isolated("onnxruntime")->load("/nonexistent/model.onnx");
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), ErrorCode::kBackendError);
  EXPECT_NE(session.status().message().find("ONNX Runtime"), std::string::npos)
      << session.status().message();
}

}  // namespace
}  // namespace onnxdbg
