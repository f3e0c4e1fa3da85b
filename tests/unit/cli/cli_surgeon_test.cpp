// `onnxdbg surgeon` through the real binary: --json prints what each edit did (sanitize's fold
// and cleanup counts, to-fp16's conversions, extract's interface, convert-opset's versions) and
// what the final check found; a result with lint errors is refused unless --force, which writes
// it, warns loudly and exits 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/model.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::run_cli;

// Graph output 'z' has no producer (a truncated model): every edit's result has a lint error.
const char* kTruncated = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y, float[2] z) { y = Relu(x) }
)";

const char* kFoldable = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y)
<float[3] w = {1.0, 2.0, 3.0}>
{
  two = Constant<value = float {2.0}>()
  w2 = Mul(w, two)
  dead = Neg(x)
  y = Add(x, w2)
})";

class CliSurgeon : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = testing::make_temp_dir(
        "onnxdbg_cli_surgeon_" +
        std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_");
    dir_ = tmp_.path();
    ASSERT_TRUE(save_model(testing::parse_text_model(kTruncated), dir_ / "truncated.onnx").is_ok());
    ASSERT_TRUE(save_model(testing::parse_text_model(kFoldable), dir_ / "foldable.onnx").is_ok());
  }
  static nlohmann::json parse(const CliResult& r) {
    auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    return j;
  }
  TempDir tmp_;
  fs::path dir_;
};

TEST_F(CliSurgeon, SanitizeJsonReportsFoldAndCleanup) {
  auto r =
      run_cli("surgeon sanitize foldable.onnx -o out.onnx --fold-constants --cleanup --json", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = parse(r);
  EXPECT_EQ(j["command"], "sanitize");
  EXPECT_EQ(j["written"], true);
  EXPECT_EQ(j["forced"], false);
  EXPECT_EQ(j["check"]["errors"], 0);
  EXPECT_EQ(j["nodes"], 1);
  const auto& s = j["sanitize"];
  EXPECT_EQ(s["nodes_before"], 4);
  EXPECT_EQ(s["nodes_after"], 1);
  EXPECT_EQ(s["fold"]["nodes_folded"], 2);
  EXPECT_EQ(s["fold"]["initializers_added"], 1);
  EXPECT_EQ(s["fold"]["subgraph_nodes_folded"], 0);
  EXPECT_EQ(s["cleanup"]["dead_nodes"], 1);
  EXPECT_TRUE(s["moved_nodes"].is_null());  // --toposort not asked for
  EXPECT_NE(s["summary"].get<std::string>().find("4 -> 1 nodes"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ / "out.onnx"));
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(CliSurgeon, OtherCommandsJson) {
  auto r = run_cli("surgeon to-fp16 foldable.onnx -o half.onnx --json", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = parse(r);
  EXPECT_EQ(j["command"], "to-fp16");
  EXPECT_EQ(j["to-fp16"]["initializers_converted"], 1);
  EXPECT_EQ(j["to-fp16"]["constants_converted"], 1);

  r = run_cli("surgeon extract foldable.onnx -o part.onnx --inputs x:auto:auto --outputs y --json",
              dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  j = parse(r);
  EXPECT_EQ(j["extract"]["inputs"], nlohmann::json::array({"x"}));
  EXPECT_EQ(j["extract"]["outputs"], nlohmann::json::array({"y"}));
  EXPECT_EQ(j["extract"]["nodes_before"], 4);
  EXPECT_EQ(j["extract"]["nodes_after"], 3);

  r = run_cli("surgeon convert-opset foldable.onnx -o v14.onnx --opset 14 --json", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  j = parse(r);
  EXPECT_EQ(j["convert-opset"]["from"], 13);
  EXPECT_EQ(j["convert-opset"]["to"], 14);
}

TEST_F(CliSurgeon, LintErrorsRefuseTheResultUnlessForced) {
  auto r = run_cli("surgeon sanitize truncated.onnx -o out.onnx", dir_);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));
  EXPECT_EQ(r.err.rfind("onnxdbg: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("missing_graph_output"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;

  // --json still says what happened on stdout; the refusal stays one line on stderr.
  r = run_cli("surgeon sanitize truncated.onnx -o out.onnx --json", dir_);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  auto j = parse(r);
  EXPECT_EQ(j["written"], false);
  EXPECT_GE(j["check"]["errors"].get<int>(), 1);
  EXPECT_NE(j["check"]["messages"][0].get<std::string>().find("missing_graph_output"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "out.onnx"));

  r = run_cli("surgeon sanitize truncated.onnx -o out.onnx --force", dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "out.onnx"));
  EXPECT_NE(r.err.find("WARNING"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing_graph_output"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("LINT ERRORS"), std::string::npos) << r.out;
  // The forced result is what the edit made: lint finds the same error in it.
  auto lint = run_cli("lint out.onnx --json", dir_);
  EXPECT_EQ(lint.exit_code, 1) << lint.out;
  EXPECT_NE(lint.out.find("missing_graph_output"), std::string::npos);

  fs::remove(dir_ / "out.onnx");
  r = run_cli("surgeon sanitize truncated.onnx -o out.onnx --force --json", dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  j = parse(r);
  EXPECT_EQ(j["written"], true);
  EXPECT_EQ(j["forced"], true);
  EXPECT_TRUE(fs::exists(dir_ / "out.onnx"));
}

}  // namespace
}  // namespace onnxdbg
