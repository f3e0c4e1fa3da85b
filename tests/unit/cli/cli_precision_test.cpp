// `onnxdbg run --backends ...:precision=fp16` through the real binary: the float16 overflow
// points in the table and in --json, the outputs that go wrong, and --layerwise refusing it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "model/model.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::run_cli;

// big = x * 1000 is in float16's range; huge = big * 1000 is not (3e6 for x = 3).
const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (float[1,3] y)
<float k = {1000.0}, float m = {1000000.0}>
{
  big = Mul(x, k)
  huge = Mul(big, k)
  y = Div(huge, m)
}
)";

class CliPrecision : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    write_model("m.onnx", kModel);
  }
};

TEST_F(CliPrecision, NamesTheOverflowPointAndFails) {
  auto r =
      run_cli("run m.onnx --backends reference,reference:precision=fp16 --val-range [1,3]", dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("float16 overflow points (float32 reference values beyond 65504"),
            std::string::npos)
      << r.out;
  const size_t row = r.out.find(" huge ");
  ASSERT_NE(row, std::string::npos) << r.out;
  const std::string line =
      r.out.substr(r.out.rfind('\n', row) + 1, r.out.find('\n', row) - r.out.rfind('\n', row) - 1);
  EXPECT_EQ(line.find_first_not_of(' '), line.find("#1 ")) << line;  // unnamed node 1
  EXPECT_NE(line.find(" Mul "), std::string::npos) << line;
  EXPECT_NE(r.out.find("DISAGREE: reference:precision=fp16 disagrees with reference"),
            std::string::npos)
      << r.out;

  fs::create_directories(dir_ / "tmp");
  auto j =
      run_cli("run m.onnx --backends reference,onnxruntime:precision=fp16 --val-range [1,3] --json",
              dir_, false, "TMPDIR=" + (dir_ / "tmp").string() + " ");
  EXPECT_EQ(j.exit_code, 1) << j.out << j.err;
  const auto json = nlohmann::json::parse(j.out);
  ASSERT_EQ(json["fp16_overflows"].size(), 1u);
  EXPECT_EQ(json["fp16_overflows"][0]["tensor"], "huge");
  EXPECT_EQ(json["fp16_overflows"][0]["op_type"], "Mul");
  EXPECT_GT(json["fp16_overflows"][0]["max_abs"].get<double>(), 65504.0);
  EXPECT_EQ(json["backends"][1]["spec"], "onnxruntime:precision=fp16");
  EXPECT_EQ(json["backends"][1]["status"], "ok");
  // The temporary float16 model's folder is gone (other libraries may leave their own files).
  for (const auto& e : fs::directory_iterator(dir_ / "tmp"))
    EXPECT_EQ(e.path().filename().string().rfind("onnxdbg-fp16-", 0), std::string::npos)
        << e.path();
}

TEST_F(CliPrecision, BadValueAndLayerwiseAreUsageErrors) {
  auto bad = run_cli("run m.onnx --backends reference,onnxruntime:precision=int8", dir_);
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("precision must be fp32 or fp16, not 'int8'"), std::string::npos)
      << bad.err;
  auto lw = run_cli("run m.onnx --backends reference,onnxruntime:precision=fp16 --layerwise", dir_);
  EXPECT_EQ(lw.exit_code, 2) << lw.out << lw.err;
  EXPECT_NE(lw.err.find("--layerwise does not run precision=fp16 backends yet"), std::string::npos)
      << lw.err;
  EXPECT_TRUE(lw.out.empty()) << lw.out;
}

}  // namespace
}  // namespace onnxdbg
