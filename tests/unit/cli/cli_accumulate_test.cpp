// `onnxdbg run --reference-accumulate` and `reference:accumulate=double` through the real binary:
// a dot product with cancellation that float32 accumulation gets wrong separates the two modes;
// the flag sets every reference backend and the golden reference of --layerwise; a flag that
// contradicts a backend's own option is a usage error.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "model/model.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

using testing::run_cli;

class CliAccumulate : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    // z = a . x with a = (1e8, 1, ..., 1, -1e8) and x all ones (--val-range [1,1]): exactly 1022.
    std::string a = "1e8";
    for (int i = 1; i < 1023; ++i) a += ", 1.0";
    a += ", -1e8";
    const std::string text =
        "<ir_version: 8, opset_import: [\"\" : 13]>\n"
        "dot (float[1024,1] x) => (float[1,1] z) {\n"
        "  a = Constant <value = float[1,1024] {" +
        a +
        "}> ()\n"
        "  z = MatMul (a, x)\n"
        "}\n";
    write_model("dot.onnx", text);
  }
};

TEST_F(CliAccumulate, DoubleDisagreesWithFloatAndAgreesWithItself) {
  auto r = run_cli(
      "run dot.onnx --backends reference:accumulate=double,reference --val-range [1,1] "
      "--json",
      dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_NE(r.out.find("reference:accumulate=double"), std::string::npos) << r.out;

  // The flag puts both reference backends in double mode: they agree.
  r = run_cli(
      "run dot.onnx --backends reference,reference --reference-accumulate double "
      "--val-range [1,1]",
      dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run_cli(
      "run dot.onnx --backends reference,reference --reference-accumulate float "
      "--val-range [1,1]",
      dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(CliAccumulate, LayerwiseGoldenFollowsTheFlag) {
  // The layerwise golden value of z is exact in double mode; ONNX Runtime's float32 sum is not.
  auto r = run_cli(
      "run dot.onnx --backends reference,onnxruntime --reference-accumulate double "
      "--val-range [1,1] --layerwise --json",
      dir_);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  ASSERT_TRUE(j.contains("layerwise")) << j.dump(2);
  bool saw_z = false;
  for (const auto& e : j["layerwise"])
    if (e["tensor"] == "z") {
      saw_z = true;
      EXPECT_FALSE(e["pass"].get<bool>()) << e.dump();
    }
  EXPECT_TRUE(saw_z) << j.dump(2);
}

TEST_F(CliAccumulate, ContradictionAndBadValuesAreUsageErrors) {
  auto r = run_cli(
      "run dot.onnx --backends reference:accumulate=float --reference-accumulate "
      "double --val-range [1,1]",
      dir_);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("contradicts"), std::string::npos) << r.err;
  r = run_cli("run dot.onnx --reference-accumulate half", dir_);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  r = run_cli("run dot.onnx --backends reference:accumulate=half --val-range [1,1]", dir_);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("is not one of float, double"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace onnxdbg
