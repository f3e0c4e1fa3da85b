// `onnxdbg run --backends ...:precision=fp16` through the real binary: the float16 overflow
// points in the table and in --json, the outputs that go wrong, and --layerwise naming the node
// where float16 overflows.
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
const char* kCliPrecisionModel = R"(
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
    write_model("m.onnx", kCliPrecisionModel);
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
  // float32 tolerances with a float16 backend: a note says why nearly everything will differ.
  EXPECT_NE(r.err.find("onnxdbg: note: reference:precision=fp16 rounds every value to float16 "
                       "(relative error up to 4.9e-4), beyond --rtol 1e-05"),
            std::string::npos)
      << r.err;

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

TEST_F(CliPrecision, BadValueIsAUsageError) {
  auto bad = run_cli("run m.onnx --backends reference,onnxruntime:precision=int8", dir_);
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("precision must be fp32 or fp16, not 'int8'"), std::string::npos)
      << bad.err;
}

// --layerwise on the interpreter's float16 run names the Mul that overflows, not the Div after
// it (whose golden input is already beyond float16's range), and writes it as a float16 test case
// that fails the same way.
TEST_F(CliPrecision, LayerwiseNamesTheNodeWhereFloat16Overflows) {
  auto r = run_cli(
      "run m.onnx --backends reference,reference:precision=fp16 --val-range [1,3] --layerwise "
      "--isolate --atol 1e-2 --rtol 1e-2 --save-repro repro --json",
      dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  const auto& f = j["first_divergent_node"];
  ASSERT_TRUE(f.is_object()) << j.dump(2);
  EXPECT_EQ(f["tensor"], "huge");
  EXPECT_EQ(f["op_type"], "Mul");
  EXPECT_EQ(f["node"], "#1");
  EXPECT_EQ(f["backend"], "reference:precision=fp16");
  EXPECT_EQ(f["precision"], "fp16");
  EXPECT_EQ(f["basis"], "own");
  EXPECT_TRUE(f["own_error"].is_null());  // +Inf
  std::map<std::string, nlohmann::json> by_tensor;
  for (const auto& e : j["layerwise"]) by_tensor[e["tensor"].get<std::string>()] = e;
  ASSERT_EQ(by_tensor.size(), 3u) << j["layerwise"].dump(2);
  EXPECT_TRUE(by_tensor["big"]["pass"].get<bool>());  // up to 3000: rounded within 1e-2
  EXPECT_FALSE(by_tensor["big"]["fp16_overflow"].get<bool>());
  EXPECT_EQ(by_tensor["huge"]["error_source"], "own");
  EXPECT_EQ(by_tensor["huge"]["nan_or_inf"], 3);
  EXPECT_TRUE(by_tensor["huge"]["fp16_overflow"].get<bool>());
  EXPECT_EQ(by_tensor["y"]["error_source"], "inherited");
  EXPECT_TRUE(by_tensor["y"]["input_beyond_fp16"].get<bool>());
  EXPECT_EQ(j["fp16_overflows"].size(), 1u);

  // The repro is the Mul alone in float16 (Casts at its edges), and fails as it did.
  auto repro = load_model(dir_ / "repro" / "model.onnx");
  ASSERT_TRUE(repro.has_value()) << repro.status().to_string();
  std::vector<std::string> ops;
  for (const auto& n : repro->proto.graph().node()) ops.push_back(n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Cast", "Mul", "Cast"}));
  auto c = run_cli("conformance repro --backends reference", dir_);
  EXPECT_NE(c.out.find("reference: 0 passed, 1 failed"), std::string::npos) << c.out << c.err;
}

// ONNX Runtime's CPU provider computes this float16 model's Muls in float32 (no float16 kernel),
// so nothing overflows there and the report says so; what goes wrong on it is the Div, whose
// divisor 1e6 float16 cannot hold (clamped to 65504): that Div is its first divergent node.
TEST_F(CliPrecision, LayerwiseSaysWhereOnnxRuntimeComputedInFloat32) {
  auto r = run_cli(
      "run m.onnx --backends reference,onnxruntime:precision=fp16 --val-range [1,3] --layerwise "
      "--isolate --atol 1e-2 --rtol 1e-2",
      dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("note (onnxruntime:precision=fp16): 3 of 3 float tensors hold values "
                       "float16 cannot represent (first: 'big' of node #0 Mul): the backend "
                       "computed them in float32"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("first divergent node: #2 Div, tensor 'y', on "
                       "onnxruntime:precision=fp16: its own error (alone, on golden inputs) is "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("repro: onnxdbg-repro/m_Div_2 (model.onnx with that node alone in float16"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err.find("note:"), std::string::npos) << r.err;  // tolerances fit float16
}

}  // namespace
}  // namespace onnxdbg
