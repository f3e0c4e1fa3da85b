// `onnxdbg run`'s last line and exit status through the real binary (issue 19): the last line
// states the verdict and its cause, and the status matches it: 2 for a bad model, 1 for a
// backend failing on a valid model (its reason in the line) or a disagreement, the layerwise
// pass's included, 0 when everything agrees. Also: nodes listed before their inputs' producers
// run, and Polygraphy's files: names that are not inputs are ignored, RunResults are written.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "data/npz.h"
#include "data/polygraphy_json.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

using nlohmann::json;
using testing::CliResult;
using testing::run_cli;

/// The last non-empty line of `text`.
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

const char* kMul = R"(
<ir_version: 8, opset_import: ["" : 13]>
mul (float[1,4] x) => (float[1,4] y)
<float[1] two = {2.0}>
{
  t = Relu(x)
  y = Mul(t, two)
}
)";

class CliVerdict : public testing::CliTest {};

TEST_F(CliVerdict, AModelEveryBackendFindsInvalidExits2NamingEachReason) {
  // Reshape of 6 elements to 4x4: lint's structural rules let it through, every backend fails.
  write_model("reshape.onnx", R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[4,4] y)
<int64[2] shape = {4, 4}>
{
  y = Reshape(x, shape)
}
)");
  CliResult r = run_cli("run reshape.onnx --backends reference,onnxruntime", dir_);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const std::string line = last_line(r.out);
  EXPECT_EQ(line.rfind("ERROR: every backend failed on the model, which reference found invalid: "
                       "reference (run): ",
                       0),
            0u)
      << line;
  EXPECT_NE(line.find("; onnxruntime ("), std::string::npos) << line;
  auto j = run_cli("run reshape.onnx --backends reference,onnxruntime --json", dir_);
  EXPECT_EQ(j.exit_code, 2);
  auto parsed = json::parse(j.out);
  EXPECT_EQ(parsed["verdict"], "error");
  EXPECT_EQ("ERROR: " + parsed["verdict_line"].get<std::string>(), line);
}

TEST_F(CliVerdict, ABackendFailingOnAValidModelExits1WithItsReasonLast) {
  write_model("mul.onnx", kMul);
  CliResult r =
      run_cli("run mul.onnx --backends reference,onnxruntime:debug_crash=run,onnxruntime", dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string line = last_line(r.out);
  EXPECT_EQ(line.rfind("ERROR: could not run on onnxruntime:debug_crash=run (run): ", 0), 0u)
      << line;
  EXPECT_NE(line.find("crashed with SIGSEGV"), std::string::npos) << line;
}

TEST_F(CliVerdict, LayerwiseAgreementExits0WithAgreeLast) {
  write_model("mul.onnx", kMul);
  CliResult r = run_cli("run mul.onnx --backends reference,onnxruntime --layerwise", dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string line = last_line(r.out);
  EXPECT_EQ(line.rfind("AGREE: all 2 backends agree", 0), 0u) << r.out;
  EXPECT_NE(line.find("; every intermediate tensor agrees (layerwise)"), std::string::npos) << line;
}

TEST_F(CliVerdict, LayerwiseDisagreementBehindAgreeingOutputsExits1AndSaysSo) {
  write_model("mul.onnx", kMul);
  const Tensor x = Tensor::from_vector<float>({1, 4}, {1, -2, 3, 4});
  ASSERT_TRUE(save_npz(dir_ / "in.npz", {{"x", x}}).is_ok());
  // Golden y is right, golden t (an intermediate tensor) is not.
  ASSERT_TRUE(save_npz(dir_ / "gold.npz", {{"y", Tensor::from_vector<float>({1, 4}, {2, 0, 6, 8})},
                                           {"t", Tensor::from_vector<float>({1, 4}, {9, 9, 9, 9})}})
                  .is_ok());
  CliResult r = run_cli(
      "run mul.onnx --backends reference --load-inputs in.npz --load-outputs gold.npz --layerwise",
      dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string line = last_line(r.out);
  EXPECT_EQ(line.rfind("DISAGREE: the outputs agree (", 0), 0u) << r.out;
  EXPECT_NE(line.find("but 1 of 2 intermediate tensors on reference are outside tolerance "
                      "(layerwise); first divergent node #0 Relu, tensor 't'"),
            std::string::npos)
      << line;
  auto j = run_cli(
      "run mul.onnx --backends reference --load-inputs in.npz --load-outputs gold.npz --layerwise "
      "--json",
      dir_);
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_EQ(json::parse(j.out)["verdict"], "disagree");
}

TEST_F(CliVerdict, NodesListedBeforeTheirInputsRunAndAgreeWithOnnxRuntime) {
  // The chain of kMul's shape, listed backwards, in float16.
  write_model("backwards.onnx", R"(
<ir_version: 8, opset_import: ["" : 13]>
backwards (float16[1,4] x) => (float16[1,4] y)
<float[1] halff = {0.5}>
{
  y = Add(c, half)
  c = Mul(b, half)
  b = Relu(a)
  a = Add(x, half)
  half = Cast<to = 10>(halff)
}
)");
  const std::string tol = " --atol 1e-3 --rtol 1e-2";  // float16's rounding
  CliResult r = run_cli("run backwards.onnx --backends reference,onnxruntime" + tol, dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(last_line(r.out).rfind("AGREE", 0), 0u) << r.out;
  EXPECT_NE(r.err.find("4 nodes are listed before the nodes producing their inputs"),
            std::string::npos)
      << r.err;
  // The whole command, as lint's fix gives it: model and output paths included.
  EXPECT_NE(
      r.err.find("onnxdbg surgeon sanitize backwards.onnx --toposort -o backwards.sorted.onnx"),
      std::string::npos)
      << r.err;
  CliResult lw =
      run_cli("run backwards.onnx --backends reference,onnxruntime --layerwise" + tol, dir_);
  EXPECT_EQ(lw.exit_code, 0) << lw.out << lw.err;
  EXPECT_EQ(last_line(lw.out).rfind("AGREE", 0), 0u) << lw.out;
  // lint still reports the order.
  CliResult lint = run_cli("lint backwards.onnx", dir_);
  EXPECT_EQ(lint.exit_code, 1);
  EXPECT_NE(lint.out.find("use_before_definition"), std::string::npos) << lint.out;
}

TEST_F(CliVerdict, ACycleIsAModelError) {
  write_model("cycle.onnx", R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  a = Add(x, b)
  b = Relu(a)
  y = Neg(b)
})");
  CliResult r = run_cli("run cycle.onnx", dir_);
  testing::expect_usage_error(r, "the nodes form a cycle");
}

TEST_F(CliVerdict, LoadInputsIgnoresNamesThatAreNotInputsWithANote) {
  write_model("mul.onnx", kMul);
  const Tensor x = Tensor::from_vector<float>({1, 4}, {1, -2, 3, 4});
  std::ofstream(dir_ / "merged.json") << json::array({{{"x", testing::polygraphy_ndarray(x)},
                                                       {"t", testing::polygraphy_ndarray(x)},
                                                       {"y", testing::polygraphy_ndarray(x)}}})
                                             .dump();
  CliResult r = run_cli("run mul.onnx --backends reference --load-inputs merged.json", dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("'merged.json' also holds 2 tensors that are not inputs of the model: 't', "
                       "'y'; ignored, as Polygraphy ignores them"),
            std::string::npos)
      << r.err;
}

// The exact JSON of Polygraphy's formats (what polygraphy/json/serde.py and
// comparator/struct.py write; `make test-polygraphy` checks Polygraphy reads them).
TEST_F(CliVerdict, SaveOutputsJsonIsPolygraphyRunResults) {
  write_model("mul.onnx", kMul);
  const Tensor x = Tensor::from_vector<float>({1, 4}, {1, -2, 3, 4});
  ASSERT_TRUE(save_npz(dir_ / "in.npz", {{"x", x}}).is_ok());
  CliResult r = run_cli(
      "run mul.onnx --backends reference,onnxruntime --load-inputs in.npz --save-inputs in.json "
      "--save-outputs out.json",
      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto read = [&](const char* name) {
    std::ifstream f(dir_ / name);
    return json::parse(f);
  };
  const json in = read("in.json");
  ASSERT_TRUE(in.is_array());
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0], json({{"x", testing::polygraphy_ndarray(x)}}));

  const json out = read("out.json");
  ASSERT_TRUE(out.is_object());
  EXPECT_EQ(out.size(), 2u) << out;
  EXPECT_EQ(out["polygraphy_class"], "RunResults");
  const json& lst = out["lst"];
  ASSERT_EQ(lst.size(), 2u);
  const Tensor y = Tensor::from_vector<float>({1, 4}, {2, 0, 6, 8});
  const char* runners[] = {"reference", "onnxruntime"};
  for (size_t k = 0; k < 2; ++k) {
    ASSERT_TRUE(lst[k].is_array() && lst[k].size() == 2u) << lst[k];
    EXPECT_EQ(lst[k][0], runners[k]);
    ASSERT_EQ(lst[k][1].size(), 1u);
    const json& it = lst[k][1][0];
    EXPECT_EQ(
        it,
        json({{"outputs",
               {{"y",
                 {{"values", testing::polygraphy_ndarray(y)}, {"polygraphy_class", "LazyArray"}}}}},
              {"runtime", nullptr},
              {"runner_name", runners[k]},
              {"polygraphy_class", "IterationResult"}}))
        << it;
  }
  // --load-outputs reads it back: the first runner's iterations are the golden values.
  CliResult again = run_cli(
      "run mul.onnx --backends onnxruntime --load-inputs in.json --load-outputs out.json", dir_);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
}

}  // namespace
}  // namespace onnxdbg
