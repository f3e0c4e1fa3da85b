// `onnxdbg run --backends onnxruntime:providers=...` through the real binary and the real ONNX
// Runtime (CPU-only build): a requested provider that is missing is a warning in the table and in
// --json, --strict-providers makes it exit code 2, and the CPU provider as asked is clean.
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

const char* kCliProvidersModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (float[1,2] y)
<float[3,2] w = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}>
{
  m = MatMul(x, w)
  y = Relu(m)
}
)";

class CliProviders : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    write_model("m.onnx", kCliProvidersModel);
  }
};

TEST_F(CliProviders, MissingCudaIsAWarningInTheTable) {
  auto r = run_cli("run m.onnx --backends reference,onnxruntime:providers=cuda,cpu", dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // the numbers agree; the warning does not fail
  EXPECT_NE(r.out.find("warning (onnxruntime:providers=cuda,cpu): execution provider 'cuda' "
                       "(CUDAExecutionProvider) was requested but this ONNX Runtime build does "
                       "not have it"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("requested cuda+cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nodes by provider (onnxruntime:providers=cuda,cpu):"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("CPUExecutionProvider: 2 nodes (MatMul 1, Relu 1)"), std::string::npos)
      << r.out;
}

TEST_F(CliProviders, JsonHasRequestedUsedWarningsAndNodeCounts) {
  auto r =
      run_cli("run m.onnx --backends reference,onnxruntime:providers=openvino+cpu --json", dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["backends"].size(), 2u);
  const auto& ort = j["backends"][1];
  EXPECT_EQ(ort["providers_requested"],
            (nlohmann::json{"OpenVINOExecutionProvider", "CPUExecutionProvider"}));
  EXPECT_EQ(ort["providers_used"], (nlohmann::json{"CPUExecutionProvider"}));
  EXPECT_EQ(ort["provider_node_counts"], (nlohmann::json{{"CPUExecutionProvider", 2}}));
  ASSERT_EQ(ort["provider_warnings"].size(), 1u);
  EXPECT_NE(ort["provider_warnings"][0].get<std::string>().find("'openvino'"), std::string::npos);
  EXPECT_NE(std::find(ort["warnings"].begin(), ort["warnings"].end(), ort["provider_warnings"][0]),
            ort["warnings"].end());
  ASSERT_EQ(ort["node_providers"].size(), 2u);
  EXPECT_EQ(ort["node_providers"][0]["provider"], "CPUExecutionProvider");
  EXPECT_EQ(j["verdict"], "agree");
  // The reference has no providers to ask for.
  EXPECT_TRUE(j["backends"][0]["providers_requested"].empty());
  EXPECT_TRUE(j["backends"][0]["provider_warnings"].empty());
}

TEST_F(CliProviders, StrictProvidersExitsTwo) {
  auto r = run_cli(
      "run m.onnx --backends reference,onnxruntime:providers=tensorrt+cuda+cpu "
      "--strict-providers --json",
      dir_);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "error");
  EXPECT_NE(j["verdict_line"].get<std::string>().find("--strict-providers"), std::string::npos);
  EXPECT_EQ(r.err.rfind("onnxdbg: error: onnxruntime:providers=tensorrt+cuda+cpu did not run", 0),
            0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("'tensorrt'"), std::string::npos) << r.err;
}

TEST_F(CliProviders, CpuAsAskedPassesStrict) {
  auto r =
      run_cli("run m.onnx --backends reference,onnxruntime:providers=cpu --strict-providers", dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CPUExecutionProvider (2 nodes)"), std::string::npos) << r.out;
}

TEST_F(CliProviders, TypoInAProviderIsAUsageError) {
  auto r = run_cli("run m.onnx --backends reference,onnxruntime:providers=cdua", dir_);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("unknown execution provider 'cdua'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace onnxdbg
