// `onnxdbg run --layerwise` through the real binary: the demo model's first divergent node in the
// JSON report and its repro folder, and bad input (budget, backends, inputs of another model)
// as one clear sentence with exit code 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "data/npz.h"
#include "model/model.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::run_cli;

class CliLayerwise : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    model_ = dir_ / "demo.onnx";
    write_model("demo.onnx", testing::demo_model_text());
  }
  void expect_usage_error(const CliResult& r, const std::string& needle) {
    testing::expect_usage_error(r, needle);
    EXPECT_FALSE(fs::exists(dir_ / "onnxdbg-repro"));
  }
  fs::path model_;
};

TEST_F(CliLayerwise, DemoNamesSoftmaxAndWritesTheRepro) {
  auto r = run_cli("run demo.onnx --backends reference,opencv --layerwise --isolate --json", dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  const auto& f = j["first_divergent_node"];
  ASSERT_TRUE(f.is_object()) << j.dump(2);
  EXPECT_EQ(f["op_type"], "Softmax");
  EXPECT_EQ(f["tensor"], "probs");
  EXPECT_EQ(f["backend"], "opencv");
  EXPECT_GT(f["own_error"].get<double>(), 0.1);
  ASSERT_TRUE(f["repro"].is_string());
  const fs::path repro = dir_ / f["repro"].get<std::string>();
  EXPECT_TRUE(fs::exists(repro / "model.onnx")) << repro;
  EXPECT_TRUE(fs::exists(repro / "test_data_set_0" / "input_0.pb")) << repro;
  ASSERT_EQ(j["layerwise"].size(), 4u);
  for (const auto& e : j["layerwise"]) {
    for (const char* key : {"tensor", "node", "op_type", "backend", "max_abs_error",
                            "max_rel_error", "own_error", "nan_or_inf", "pass"})
      EXPECT_TRUE(e.contains(key)) << key;
    EXPECT_EQ(e["pass"].get<bool>(), e["tensor"] != "probs") << e.dump();
  }

  // The text report names it too, and the repro folder's test case fails on OpenCV alone.
  r = run_cli(
      "run demo.onnx --backends reference,onnxruntime,opencv --layerwise --isolate "
      "--save-repro softmax_case",
      dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("first divergent node: #2 Softmax, tensor 'probs', on opencv"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("repro: softmax_case"), std::string::npos) << r.out;
  r = run_cli("conformance softmax_case --backends reference,onnxruntime,opencv", dir_);
  EXPECT_NE(r.out.find("opencv: 0 passed, 1 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("onnxruntime: 1 passed, 0 failed"), std::string::npos) << r.out;
}

TEST_F(CliLayerwise, AgreeingBackendsExitZero) {
  auto r = run_cli("run demo.onnx --backends reference,onnxruntime --layerwise --isolate", dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("first divergent node: none"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "onnxdbg-repro"));
}

// Golden values from a file with intermediate tensors (as PyTorch or TensorFlow would dump them;
// here the reference's, saved by --save-outputs --layerwise): every backend listed, the reference
// too, is compared with them layerwise.
TEST_F(CliLayerwise, LoadedGoldenValuesAreTheLayerwiseGolden) {
  auto r = run_cli(
      "run demo.onnx --backends reference,onnxruntime --layerwise --save-inputs in.npz "
      "--save-outputs golden.npz",
      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* backend : {"onnxruntime", "reference"}) {
    r = run_cli(std::string("run demo.onnx --load-inputs in.npz --load-outputs golden.npz "
                            "--layerwise --backends ") +
                    backend,
                dir_);
    EXPECT_EQ(r.exit_code, 0) << backend << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("layerwise against 'golden.npz': 4 intermediate tensors"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("no golden value"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("first divergent node: none"), std::string::npos) << r.out;
  }

  // Relu's output off by 0.5 in one element, MatMul's left out: Relu is named, on its own
  // error (isolated on the reference's 'proj', which the file lacks).
  auto g = load_npz(dir_ / "golden.npz");
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  ASSERT_TRUE(g->count("act") && g->count("proj"));
  g->at("act").data<float>()[5] += 0.5f;
  g->erase("proj");
  ASSERT_TRUE(save_npz(dir_ / "bad.npz", *g).is_ok());
  r = run_cli(
      "run demo.onnx --backends onnxruntime --load-inputs in.npz --load-outputs bad.npz "
      "--layerwise --isolate --json --save-repro -",
      dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  const auto& f = j["first_divergent_node"];
  ASSERT_TRUE(f.is_object()) << j.dump(2);
  EXPECT_EQ(f["tensor"], "act");
  EXPECT_EQ(f["op_type"], "Relu");
  EXPECT_EQ(f["backend"], "onnxruntime");
  EXPECT_EQ(f["basis"], "own");
  EXPECT_NEAR(f["own_error"].get<double>(), 0.5, 1e-6);
  EXPECT_EQ(j["layerwise_summary"]["golden_source"], "bad.npz");
  EXPECT_EQ(j["layerwise_summary"]["no_golden"], nlohmann::json({"proj"}));
  EXPECT_EQ(j["layerwise_summary"]["tensors"], 3);
  EXPECT_EQ(j["layerwise_summary"]["reference_runs"], 1);

  r = run_cli(
      "run demo.onnx --backends reference --load-inputs in.npz --load-outputs bad.npz "
      "--layerwise --save-repro -",
      dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("no golden value: 1 tensor not compared ('proj'"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("first divergent node: #1 Relu, tensor 'act', on reference"),
            std::string::npos)
      << r.out;

  // Without --layerwise the intermediate tensors are not compared, as before.
  r = run_cli("run demo.onnx --backends onnxruntime --load-inputs in.npz --load-outputs bad.npz",
              dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("not graph outputs; they are not compared"), std::string::npos) << r.err;

  // A name that is no tensor of the model: one sentence, nothing run.
  (*g)["features.3"] = g->at("act");
  ASSERT_TRUE(save_npz(dir_ / "other.npz", *g).is_ok());
  expect_usage_error(run_cli("run demo.onnx --backends onnxruntime --load-inputs in.npz "
                             "--load-outputs other.npz --layerwise",
                             dir_),
                     "holds 'features.3', which is not a tensor of the model");
}

TEST_F(CliLayerwise, BadInputIsOneSentence) {
  expect_usage_error(
      run_cli("run demo.onnx --backends reference,onnxruntime --layerwise-memory 90 --layerwise",
              dir_),
      "too small for tensor 'proj'");
  expect_usage_error(run_cli("run demo.onnx --layerwise --layerwise-memory lots", dir_),
                     "--layerwise-memory: 'lots' is not a memory size");
  expect_usage_error(run_cli("run demo.onnx --backends reference --layerwise", dir_),
                     "add one to --backends");
  // Inputs saved from another model: no half-written report, one sentence.
  std::map<std::string, Tensor> other;
  other["images"] = Tensor(DType::kFloat, {1, 3, 8, 8});
  ASSERT_TRUE(save_npz(dir_ / "other.npz", other).is_ok());
  expect_usage_error(run_cli("run demo.onnx --backends reference,onnxruntime --layerwise "
                             "--load-inputs other.npz",
                             dir_),
                     "holds 'images', which is not an input");
}

}  // namespace
}  // namespace onnxdbg
