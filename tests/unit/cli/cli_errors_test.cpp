// Bad input through the real CLI binary: each case must give one clear sentence on stderr and the
// documented exit code, never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/model.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;

// stdout and stderr together in r.out, in the order written.
CliResult run_cli_merged(const std::string& args) {
  return testing::run_cli(args, {}, /*merge_stderr=*/true);
}

class CliErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = testing::make_temp_dir(
        "onnxdbg_cli_" +
        std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_");
    dir_ = tmp_.path();
  }
  fs::path write_model(const std::string& name, const std::string& text) {
    auto m = testing::parse_text_model(text);
    const fs::path p = dir_ / name;
    EXPECT_TRUE(save_model(m, p).is_ok());
    return p;
  }
  TempDir tmp_;
  fs::path dir_;
};

const char* kDynamicModel = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[N, 3] x) => (float[N, 3] y) { y = Identity(x) }
)";

// One line on stderr that starts "onnxdbg: error:".
void expect_one_error_line(const CliResult& r, const std::string& needle) {
  EXPECT_EQ(r.out.rfind("onnxdbg: error: ", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << r.out;
}

TEST_F(CliErrors, MissingFile) {
  auto r = run_cli_merged("run " + (dir_ / "nope.onnx").string());
  EXPECT_EQ(r.exit_code, 2);
  expect_one_error_line(r, "does not exist");
}

// Names and doc strings that are not UTF-8 made `lint --json` and `inspect --json` print invalid
// JSON (or throw nlohmann's type_error 316; issue 17): the bytes come out as U+FFFD.
TEST_F(CliErrors, InvalidUtf8NamesStillGiveValidJson) {
  auto m = testing::parse_text_model(kDynamicModel);
  m.mutable_graph()->mutable_node(0)->set_name("bad\xff\xfename");
  m.mutable_graph()->mutable_node(0)->set_doc_string("ctrl\x01\x1f and \xc3");
  m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");  // a finding naming the node
  const fs::path p = dir_ / "utf8.onnx";
  ASSERT_TRUE(save_model(m, p).is_ok());
  for (const std::string cmd : {"lint --json ", "inspect --mode layers --json "}) {
    auto r = testing::run_cli(cmd + p.string(), {}, /*merge_stderr=*/false);
    EXPECT_LE(r.exit_code, 1) << cmd << r.out;
    auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << cmd << r.out;
    EXPECT_NE(r.out.find("bad\ufffd"), std::string::npos) << cmd << r.out;
  }
}

// libonnx 1.12's shape inference divided by zero on Conv strides [0, 0] (SIGFPE); ONNX 1.23 refuses
// them. Either way (it runs in a child process) lint reports a finding and view draws the page
// (issue 17 item 2).
TEST_F(CliErrors, ACrashInOnnxShapeInferenceIsAFindingNotACrash) {
  const fs::path p = write_model("strides0.onnx", R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,4,4] x, float[1,1,2,2] w) => (float y) { y = Conv<strides = [0, 0]>(x, w) }
)");
  auto lint = run_cli_merged("lint " + p.string());
  EXPECT_EQ(lint.exit_code, 1) << lint.out;
  EXPECT_TRUE(
      lint.out.find("shape inference fails: Attribute strides must only contain positive") !=
          std::string::npos ||
      lint.out.find("crashed with signal 8") != std::string::npos)
      << lint.out;
  const fs::path page = dir_ / "page.html";
  auto view = run_cli_merged("view " + p.string() + " -o " + page.string());
  EXPECT_EQ(view.exit_code, 0) << view.out;
  EXPECT_TRUE(fs::exists(page));
}

TEST_F(CliErrors, TruncatedModel) {
  const fs::path good = write_model("good.onnx", kDynamicModel);
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const fs::path bad = dir_ / "truncated.onnx";
  std::ofstream(bad, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  auto r = run_cli_merged("run " + bad.string() + " --backends reference");
  EXPECT_EQ(r.exit_code, 2);
  expect_one_error_line(r, "not a valid ONNX model");
}

// With --json, a command that fails prints one JSON object naming the error on stdout (and the
// sentence on stderr), so that a program reading stdout never gets nothing (issue 17).
TEST_F(CliErrors, AFailureWithJsonIsOneJsonObjectOnStdout) {
  const fs::path bad = dir_ / "notes.onnx";
  std::ofstream(bad) << "this is not a model\n";
  const std::vector<std::string> cmds = {"lint --json ", "inspect --json ", "run --json ",
                                         "diff --json " + bad.string() + " "};
  for (const std::string& cmd : cmds) {
    auto r = testing::run_cli(cmd + bad.string(), {}, /*merge_stderr=*/false);
    EXPECT_EQ(r.exit_code, 2) << cmd << r.out;
    auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << cmd << r.out;
    EXPECT_EQ(j["error"]["code"], "model_error") << cmd << r.out;
    EXPECT_NE(j["error"]["message"].get<std::string>().find("not a valid ONNX model"),
              std::string::npos)
        << cmd << r.out;
    EXPECT_NE(r.err.find("onnxdbg: error: "), std::string::npos) << cmd << r.err;
  }
  auto missing = testing::run_cli("lint --json " + (dir_ / "nope.onnx").string(), {}, false);
  EXPECT_EQ(nlohmann::json::parse(missing.out)["error"]["code"], "not_found") << missing.out;
}

TEST_F(CliErrors, TextFileNamedOnnx) {
  const fs::path bad = dir_ / "notes.onnx";
  std::ofstream(bad) << "this is not a model\nreally not\n";
  auto r = run_cli_merged("run " + bad.string() + " --backends reference");
  EXPECT_EQ(r.exit_code, 2);
  expect_one_error_line(r, "ONNX model");
}

TEST_F(CliErrors, ExternalDataEscapingTheModelFolder) {
  auto m = testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) <float[2] w = {1.0, 2.0}> { y = Add(x, w) }
)");
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("../secret.bin");
  const fs::path p = dir_ / "escape.onnx";
  ASSERT_TRUE(save_model(m, p).is_ok());
  auto r = run_cli_merged("run " + p.string() + " --backends reference");
  EXPECT_EQ(r.exit_code, 2);
  expect_one_error_line(r, "escapes the model's folder");
}

TEST_F(CliErrors, InputShapeMissingADim) {
  const fs::path p = write_model("dyn.onnx", kDynamicModel);
  auto r = run_cli_merged("run " + p.string() + " --backends reference");
  EXPECT_EQ(r.exit_code, 2);
  expect_one_error_line(r, "dynamic dimension 'N' on axis 0");
  EXPECT_NE(r.out.find("--input-shapes x:Nx3"), std::string::npos) << r.out;
}

TEST_F(CliErrors, UnknownBackendAndOption) {
  const fs::path p = write_model("dyn.onnx", kDynamicModel);
  auto r =
      run_cli_merged("run " + p.string() + " --backends reference,tensorrt --input-shapes x:2x3");
  EXPECT_EQ(r.exit_code, 2);
  expect_one_error_line(r, "unknown backend 'tensorrt'");
  r = run_cli_merged("run " + p.string() +
                     " --backends onnxruntime:speed=max --input-shapes x:2x3");
  EXPECT_EQ(r.exit_code, 2);
  expect_one_error_line(r, "has no option 'speed'");
}

TEST_F(CliErrors, CrashingBackendIsAnErrorResultNotACrash) {
  const fs::path p = write_model("dyn.onnx", kDynamicModel);
  auto r = run_cli_merged(
      "run " + p.string() +
      " --backends reference,onnxruntime:debug_crash=run --input-shapes x:2x3 --json");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("SIGSEGV"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"verdict\": \"error\""), std::string::npos) << r.out;
}

}  // namespace
}  // namespace onnxdbg
