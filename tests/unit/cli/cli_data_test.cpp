// `onnxdbg run --load-inputs/--load-outputs` with Polygraphy JSON written by hand in the test, and
// `onnxdbg data to-input`, through the real binary and real ONNX Runtime: loaded golden outputs
// are what every backend is compared with, wrong data is one sentence with exit code 2 and no
// file half-written.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "data/npy.h"
#include "data/npz.h"
#include "data/polygraphy_json.h"
#include "model/model.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

using testing::row;

namespace fs = std::filesystem;
using nlohmann::json;

using testing::CliResult;
using testing::expect_usage_error;
using testing::run_cli;

const char* kCliDataModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (float[1,3] y)
{
  h = Relu(x)
  y = Neg(h)
}
)";

/// An array as Polygraphy encodes it.

class CliData : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    write_model("m.onnx", kCliDataModel);
    // Two samples of inputs, as `polygraphy run --save-inputs` writes them...
    write("in.json", json::array({{{"x", testing::polygraphy_ndarray(row(1, -2, 3))}},
                                  {{"x", testing::polygraphy_ndarray(row(-1, 5, 0.5))}}}));
    // ...and RunResults for them, as `polygraphy run --save-outputs` writes them. The second
    // sample's golden value of y is deliberately wrong in its first element.
    auto iteration = [](const Tensor& y, const Tensor& h) {
      return json{
          {"outputs",
           {{"y", {{"values", testing::polygraphy_ndarray(y)}, {"polygraphy_class", "LazyArray"}}},
            {"h",
             {{"values", testing::polygraphy_ndarray(h)}, {"polygraphy_class", "LazyArray"}}}}},
          {"runtime", 0.0005},
          {"runner_name", "onnxrt-runner-N0"},
          {"polygraphy_class", "IterationResult"}};
    };
    write(
        "out.json",
        {{"lst",
          json::array({json::array(
              {"onnxrt-runner-N0", json::array({iteration(row(-1, 0, -3), row(1, 0, 3)),
                                                iteration(row(-9, -5, -0.5), row(0, 5, 0.5))})})})},
         {"polygraphy_class", "RunResults"}});
  }
  void write(const std::string& name, const json& j) { std::ofstream(dir_ / name) << j.dump(4); }
};

TEST_F(CliData, LoadedOutputsAreTheGoldenValues) {
  auto good = run_cli(
      "run m.onnx --backends reference,onnxruntime --load-inputs in.json --load-outputs out.json "
      "--sample 0 --json",
      dir_);
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  auto j = json::parse(good.out);
  EXPECT_EQ(j["backends"][0]["name"], "loaded");
  EXPECT_EQ(j["comparisons"].size(), 2u);  // y of reference and of onnxruntime, against the file
  for (const auto& c : j["comparisons"]) {
    EXPECT_EQ(c["against"], "loaded:file=out.json");
    EXPECT_EQ(c["output"], "y");
    EXPECT_TRUE(c["pass"].get<bool>());
  }
  // Sample 1's saved y is wrong in one element: both backends disagree with the file there.
  auto bad = run_cli(
      "run m.onnx --backends reference,onnxruntime --load-inputs in.json --load-outputs out.json "
      "--sample 1",
      dir_);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("DISAGREE: reference disagrees with loaded:file=out.json on output 'y': "
                         "max abs error 9 at [0, 0]"),
            std::string::npos)
      << bad.out;
  EXPECT_NE(bad.err.find("holds 2 samples; running sample 1"), std::string::npos) << bad.err;
  // Without --sample both samples run, each against its own golden sample: only sample 1 fails.
  auto both = run_cli(
      "run m.onnx --backends reference,onnxruntime --load-inputs in.json --load-outputs out.json",
      dir_);
  EXPECT_EQ(both.exit_code, 1) << both.out << both.err;
  EXPECT_NE(both.out.find("sample 0: AGREE"), std::string::npos) << both.out;
  EXPECT_NE(both.out.find("DISAGREE: outputs differ on 1 of 2 samples (1); sample 1: reference "
                          "disagrees with loaded:file=out.json on output 'y'"),
            std::string::npos)
      << both.out;
}

TEST_F(CliData, BadDataIsOneSentence) {
  // Sample counts differ.
  write("one.json", json::array({{{"x", testing::polygraphy_ndarray(row(1, 2, 3))}}}));
  expect_usage_error(run_cli("run m.onnx --load-inputs one.json --load-outputs out.json", dir_),
                     "'one.json' holds 1 input sample(s) but 'out.json' holds 2 output sample(s)");
  // A tensor name the model lacks.
  write("other.json", json::array({{{"images", testing::polygraphy_ndarray(row(1, 2, 3))}}}));
  expect_usage_error(run_cli("run m.onnx --load-inputs other.json", dir_),
                     "'other.json' holds 'images', which is not an input of the model");
  // Outputs of another model.
  ASSERT_TRUE(save_npz(dir_ / "logits.npz", {{"logits", row(0, 0, 0)}}).is_ok());
  expect_usage_error(run_cli("run m.onnx --load-outputs logits.npz", dir_),
                     "'logits', which is not a tensor of the model (its outputs: y)");
  // RunResults given as inputs.
  expect_usage_error(run_cli("run m.onnx --load-inputs out.json", dir_), "--load-outputs");
  // A sample index past the end.
  expect_usage_error(run_cli("run m.onnx --load-inputs in.json --sample 2", dir_),
                     "--sample 2: 'in.json' holds 2 sample(s)");
  // Not JSON at all.
  std::ofstream(dir_ / "broken.json") << "{\"lst\": [";
  expect_usage_error(run_cli("run m.onnx --load-outputs broken.json", dir_),
                     "'broken.json' is not valid JSON");
}

TEST_F(CliData, ToInputMergesInputsAndLayerwiseOutputs) {
  auto r = run_cli("data to-input in.json out.json -o merged.json --model m.onnx", dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2 samples, 6 tensors"), std::string::npos) << r.out;
  auto merged = load_polygraphy_json(dir_ / "merged.json");
  ASSERT_TRUE(merged.has_value()) << merged.status().to_string();
  ASSERT_EQ(merged->runs[0].second.size(), 2u);
  const auto& s1 = merged->runs[0].second[1];
  testing::expect_tensor_near(s1.at("x"), {1, 3}, {-1, 5, 0.5});
  testing::expect_tensor_near(s1.at("h"), {1, 3}, {0, 5, 0.5});
  testing::expect_tensor_near(s1.at("y"), {1, 3}, {-9, -5, -0.5});
  // The merged file feeds run: inputs from it, and its y as golden values.
  auto run = run_cli(
      "run m.onnx --load-inputs in.json --load-outputs merged.json --sample 0 --json", dir_);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;

  // One sample of inputs next to two of outputs: refused, nothing written.
  ASSERT_TRUE(save_npz(dir_ / "x.npz", {{"x", row(1, 2, 3)}}).is_ok());
  expect_usage_error(run_cli("data to-input x.npz out.json -o bad.json", dir_),
                     "holds 2 samples but 'x.npz' holds 1");
  EXPECT_FALSE(fs::exists(dir_ / "bad.json"));
  // Data of another model, checked with --model: nothing written.
  ASSERT_TRUE(save_npz(dir_ / "img.npz", {{"images", row(1, 2, 3)}}).is_ok());
  expect_usage_error(run_cli("data to-input img.npz -o bad.npz --model m.onnx", dir_),
                     "'images', which is not a tensor of m.onnx");
  EXPECT_FALSE(fs::exists(dir_ / "bad.npz"));
}

TEST_F(CliData, LayerwiseSaveOutputsHoldsEveryLayer) {
  ASSERT_TRUE(save_npz(dir_ / "x.npz", {{"x", row(1, -2, 3)}}).is_ok());
  auto r = run_cli(
      "run m.onnx --backends reference,onnxruntime --load-inputs x.npz --layerwise "
      "--save-outputs lw.npz --json",
      dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto saved = load_npz(dir_ / "lw.npz");
  ASSERT_TRUE(saved.has_value()) << saved.status().to_string();
  testing::expect_tensor_near(saved->at("h"), {1, 3}, {1, 0, 3});  // the intermediate tensor
  testing::expect_tensor_near(saved->at("y"), {1, 3}, {-1, 0, -3});
  EXPECT_TRUE(saved->count("onnxruntime/y"));
  // Merged with the inputs like `polygraphy data to-input`, and used as golden outputs.
  auto merge = run_cli("data to-input x.npz lw.npz -o all.npz --model m.onnx", dir_);
  EXPECT_EQ(merge.exit_code, 0) << merge.out << merge.err;
  auto again = run_cli("run m.onnx --load-inputs x.npz --load-outputs all.npz", dir_);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.err.find("not graph outputs; they are not compared"), std::string::npos)
      << again.err;
  // A budget too small for the layers: one sentence, and no file.
  auto tiny = run_cli(
      "run m.onnx --backends reference,onnxruntime --load-inputs x.npz --layerwise "
      "--layerwise-memory 16 --save-outputs tiny.npz",
      dir_);
  EXPECT_EQ(tiny.exit_code, 2) << tiny.out << tiny.err;
  EXPECT_FALSE(fs::exists(dir_ / "tiny.npz"));
}

// Narrow element types through the CLI on the reference backend: generated int4 and float8
// inputs in their range, saved (.npz under ml_dtypes' names), merged by `data to-input` and fed
// back; an .npz that np.save wrote for ml_dtypes arrays is one sentence.
TEST_F(CliData, NarrowTypesRunSaveAndMerge) {
  write_model("n.onnx", R"(
<ir_version: 11, opset_import: ["" : 23]>
g (int4[2, 3] q, float8e4m3fn[4] f) => (int4[2, 3] q_out, float8e4m3fn[4] f_out) {
  q_out = Identity(q)
  f_out = Identity(f)
}
)");
  auto r = run_cli(
      "run n.onnx --backends reference --val-range -20,500 --save-inputs in.npz "
      "--save-outputs out.npz",
      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("undefined"), std::string::npos) << r.out;
  auto in = load_npz(dir_ / "in.npz");
  ASSERT_TRUE(in.has_value()) << in.status().to_string();
  ASSERT_EQ(in->at("q").dtype(), DType::kInt4);
  ASSERT_EQ(in->at("f").dtype(), DType::kFloat8E4M3FN);
  for (double v : testing::values(in->at("q"))) {
    EXPECT_GE(v, -8);
    EXPECT_LE(v, 7);
  }
  for (double v : testing::values(in->at("f"))) {
    EXPECT_GE(v, -20);
    EXPECT_LE(v, 448);
  }
  auto out = load_npz(dir_ / "out.npz");
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  ASSERT_TRUE(out->count("q_out"));
  EXPECT_EQ(testing::values(out->at("q_out")), testing::values(in->at("q")));
  EXPECT_EQ(testing::values(out->at("f_out")), testing::values(in->at("f")));

  auto merge = run_cli("data to-input in.npz out.npz -o all.json --model n.onnx", dir_);
  EXPECT_EQ(merge.exit_code, 0) << merge.out << merge.err;
  auto merged = load_polygraphy_json(dir_ / "all.json");
  ASSERT_TRUE(merged.has_value()) << merged.status().to_string();
  EXPECT_EQ(merged->runs[0].second[0].at("q_out").dtype(), DType::kInt4);
  auto again = run_cli("run n.onnx --backends reference --load-inputs all.json --json", dir_);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;

  // np.save of an ml_dtypes array (descr '<V1'): refused, saying how to save it.
  write_model("one.onnx", R"(
<ir_version: 11, opset_import: ["" : 23]>
g (int4[2, 3] q) => (int4[2, 3] q_out) { q_out = Identity(q) }
)");
  std::string npy = write_npy(in->at("q"));
  npy.replace(npy.find("'int4'"), 6, "'<V1' ");  // same length
  const std::string lost = (dir_ / "lost.npy").string();
  std::ofstream(lost, std::ios::binary).write(npy.data(), static_cast<std::streamsize>(npy.size()));
  auto refused = run_cli("run one.onnx --backends reference --load-inputs lost.npy", dir_);
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("element type is lost"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace onnxdbg
