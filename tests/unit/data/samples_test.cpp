// Samples of model data: every format load_samples reads (npz, Polygraphy JSON inputs and
// RunResults, test-data folders with several test_data_set_N, single .npy), check_samples'
// refusals (another model's names, types or shapes; a missing input), merging like
// `polygraphy data to-input` (and refusing mismatched sample counts) and all-or-nothing saving.
#include "data/samples.h"

#include <gtest/gtest.h>

#include <fstream>

#include "backends/backend_test_util.h"
#include "data/npy.h"
#include "data/npz.h"
#include "data/test_data.h"

namespace onnxdbg {
namespace {

using testing::row;

using testing::ModelDir;
namespace fs = std::filesystem;

const char* kSamplesModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (float[1,3] y)
{
  h = Relu(x)
  y = Neg(h)
}
)";

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

class Samples : public ::testing::Test {
 protected:
  void SetUp() override { graph_ = testing::parse_text_model(kSamplesModel).graph(); }
  ModelDir dir_;
  onnx::GraphProto graph_;
};

TEST_F(Samples, ReadsEveryFormatAsInputs) {
  ASSERT_TRUE(save_npz(dir_.path() / "in.npz", {{"x", row(1, 2, 3)}}).is_ok());
  auto npz = load_samples(dir_.path() / "in.npz", graph_, DataRole::kInputs);
  ASSERT_TRUE(npz.has_value()) << npz.status().to_string();
  testing::expect_tensor_near(npz->samples.at(0).at("x"), {1, 3}, {1, 2, 3});

  write_text(dir_.path() / "in.json",
             polygraphy_inputs_json({{{"x", row(1, 1, 1)}}, {{"x", row(2, 2, 2)}}}));
  auto json = load_samples(dir_.path() / "in.json", graph_, DataRole::kInputs);
  ASSERT_TRUE(json.has_value()) << json.status().to_string();
  ASSERT_EQ(json->samples.size(), 2u);
  testing::expect_tensor_near(json->samples[1].at("x"), {1, 3}, {2, 2, 2});

  // A test-case folder with two data sets: one sample each, in numeric order (2 before 10).
  const fs::path tc = dir_.path() / "case";
  ASSERT_TRUE(save_test_data(tc / "test_data_set_10", graph_, {{"x", row(10, 0, 0)}}, {}).is_ok());
  ASSERT_TRUE(save_test_data(tc / "test_data_set_2", graph_, {{"x", row(2, 0, 0)}}, {}).is_ok());
  auto sets = load_samples(tc, graph_, DataRole::kInputs);
  ASSERT_TRUE(sets.has_value()) << sets.status().to_string();
  ASSERT_EQ(sets->samples.size(), 2u);
  testing::expect_tensor_near(sets->samples[0].at("x"), {1, 3}, {2, 0, 0});
  testing::expect_tensor_near(sets->samples[1].at("x"), {1, 3}, {10, 0, 0});
}

TEST_F(Samples, ReadsOutputsFromRunResultsFoldersAndNpy) {
  write_text(dir_.path() / "rr.json",
             polygraphy_run_results_json({{"trt-runner", {{{"y", row(-1, -2, -3)}}}},
                                          {"onnxrt-runner", {{{"y", row(0, 0, 0)}}}}}));
  auto rr = load_samples(dir_.path() / "rr.json", graph_, DataRole::kOutputs);
  ASSERT_TRUE(rr.has_value()) << rr.status().to_string();
  testing::expect_tensor_near(rr->samples.at(0).at("y"), {1, 3}, {-1, -2, -3});
  EXPECT_NE(rr->note.find("using the first, 'trt-runner'"), std::string::npos) << rr->note;
  // RunResults are outputs: as inputs they are refused with a pointer to the right option.
  auto as_inputs = load_samples(dir_.path() / "rr.json", graph_, DataRole::kInputs);
  ASSERT_FALSE(as_inputs.has_value());
  EXPECT_NE(as_inputs.status().message().find("--load-outputs"), std::string::npos);

  ASSERT_TRUE(
      save_test_data(dir_.path() / "set", graph_, {{"x", row(1, 2, 3)}}, {{"y", row(-1, -2, -3)}})
          .is_ok());
  auto folder = load_samples(dir_.path() / "set", graph_, DataRole::kOutputs);
  ASSERT_TRUE(folder.has_value()) << folder.status().to_string();
  EXPECT_EQ(folder->samples.at(0).size(), 1u);
  testing::expect_tensor_near(folder->samples[0].at("y"), {1, 3}, {-1, -2, -3});

  ASSERT_TRUE(save_npy(dir_.path() / "y.npy", row(4, 5, 6)).is_ok());
  auto npy = load_samples(dir_.path() / "y.npy", graph_, DataRole::kOutputs);
  ASSERT_TRUE(npy.has_value()) << npy.status().to_string();
  testing::expect_tensor_near(npy->samples.at(0).at("y"), {1, 3}, {4, 5, 6});
}

TEST_F(Samples, CheckRefusesAnotherModelsData) {
  auto check = [&](std::vector<Sample> s, DataRole role) {
    return check_samples(s, graph_, role, "'d.npz'");
  };
  EXPECT_TRUE(check({{{"x", row(1, 2, 3)}}}, DataRole::kInputs).is_ok());
  Status st = check({{{"images", row(1, 2, 3)}}}, DataRole::kInputs);
  EXPECT_NE(st.message().find("holds 'images', which is not an input of the model (its inputs: x)"),
            std::string::npos)
      << st.message();
  st = check({{{"x", Tensor::from_vector<double>({1, 3}, {1, 2, 3})}}}, DataRole::kInputs);
  EXPECT_NE(st.message().find("holds 'x' as float64, but the model's input 'x' is float32"),
            std::string::npos)
      << st.message();
  st = check({{{"x", Tensor::from_vector<float>({3}, {1, 2, 3})}}}, DataRole::kInputs);
  EXPECT_NE(st.message().find("with shape [3], but the model's input 'x' has shape [1x3]"),
            std::string::npos)
      << st.message();
  st = check({{{"x", row(1, 2, 3)}}, {}}, DataRole::kInputs);
  EXPECT_NE(st.message().find("'d.npz' sample 1 lacks the model's input 'x'"), std::string::npos)
      << st.message();

  // Outputs: intermediate tensors are fine, other backends' BACKEND/NAME entries are dropped.
  std::vector<Sample> outs = {
      {{"y", row(0, 0, 0)}, {"h", row(0, 0, 0)}, {"onnxruntime/y", row(0, 0, 0)}}};
  ASSERT_TRUE(check_samples(outs, graph_, DataRole::kOutputs, "'o.npz'").is_ok());
  EXPECT_EQ(outs[0].size(), 2u);
  st = check({{{"logits", row(0, 0, 0)}}}, DataRole::kOutputs);
  EXPECT_NE(st.message().find("'logits', which is not a tensor of the model (its outputs: y)"),
            std::string::npos)
      << st.message();
  st = check({{{"h", row(0, 0, 0)}}}, DataRole::kOutputs);
  EXPECT_NE(st.message().find("holds none of the model's outputs (y)"), std::string::npos)
      << st.message();
}

// Golden values may name tensors inside If branches (two levels down here), as the layerwise
// comparison does; a name in no graph of the model is still refused.
TEST_F(Samples, GoldenValuesMayNameTensorsInsideBranches) {
  const onnx::GraphProto nested = testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
nested (float[2] x, bool c) => (float[2] y)
{
  y = If(c) <
    then_branch = outer () => (float[2] t) {
      t = If(c) <
        then_branch = inner () => (float[2] u) { b = Neg(x)  u = Relu(b) },
        else_branch = inner_else () => (float[2] v) { v = Identity(x) }
      >
    },
    else_branch = outer_else () => (float[2] e) { e = Neg(x) }
  >
})")
                                      .graph();
  auto pair = [](float a, float b) { return Tensor::from_vector<float>({2}, {a, b}); };
  std::vector<Sample> golden = {{{"y", pair(0, 0)}, {"b", pair(-1, -2)}, {"t", pair(0, 0)}}};
  EXPECT_TRUE(check_samples(golden, nested, DataRole::kOutputs, "'g.npz'").is_ok());
  // TensorFlow's "name:0" keys (and tf2onnx's names with ":0" given without it) take the model's.
  golden = {{{"y:0", pair(0, 0)}, {"b:0", pair(-1, -2)}}};
  ASSERT_TRUE(check_samples(golden, nested, DataRole::kOutputs, "'g.npz'").is_ok());
  EXPECT_EQ(golden[0].count("y"), 1u);
  EXPECT_EQ(golden[0].count("b"), 1u);
  EXPECT_EQ(golden[0].size(), 2u);
  golden = {{{"y", pair(0, 0)}, {"nowhere", pair(0, 0)}}};
  Status st = check_samples(golden, nested, DataRole::kOutputs, "'g.npz'");
  EXPECT_NE(st.message().find("'nowhere', which is not a tensor of the model"), std::string::npos)
      << st.message();
}

TEST_F(Samples, MergeLikePolygraphyToInput) {
  const fs::path in = dir_.path() / "in.json", out = dir_.path() / "out.json";
  write_text(in, polygraphy_inputs_json({{{"x", row(1, 1, 1)}}, {{"x", row(2, 2, 2)}}}));
  write_text(out, polygraphy_run_results_json({{"onnxdbg",
                                                {{{"y", row(-1, -1, -1)}, {"h", row(1, 1, 1)}},
                                                 {{"y", row(-2, -2, -2)}, {"h", row(2, 2, 2)}}}}}));
  auto merged = merge_sample_files({in, out});
  ASSERT_TRUE(merged.has_value()) << merged.status().to_string();
  ASSERT_EQ(merged->size(), 2u);
  EXPECT_EQ((*merged)[1].size(), 3u);
  testing::expect_tensor_near((*merged)[1].at("x"), {1, 3}, {2, 2, 2});
  testing::expect_tensor_near((*merged)[1].at("y"), {1, 3}, {-2, -2, -2});

  // Saved as Polygraphy JSON and read back as inputs+outputs of the model.
  const fs::path result = dir_.path() / "merged.json";
  ASSERT_TRUE(save_samples(result, *merged).is_ok());
  auto back = load_samples(result, graph_, DataRole::kOutputs);
  ASSERT_TRUE(back.has_value()) << back.status().to_string();
  ASSERT_EQ(back->samples.size(), 2u);
  testing::expect_tensor_near(back->samples[0].at("h"), {1, 3}, {1, 1, 1});

  // A one-sample file next to a two-sample file is refused, naming both; nothing is written.
  ASSERT_TRUE(save_npz(dir_.path() / "one.npz", {{"x", row(0, 0, 0)}}).is_ok());
  auto bad = merge_sample_files({in, dir_.path() / "one.npz"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("one.npz' holds 1 sample but"), std::string::npos)
      << bad.status().message();
  // Several samples do not fit an .npz; the target is not created.
  const Status st = save_samples(dir_.path() / "m.npz", *merged);
  EXPECT_FALSE(st.is_ok());
  EXPECT_FALSE(fs::exists(dir_.path() / "m.npz"));
}

}  // namespace
}  // namespace onnxdbg
