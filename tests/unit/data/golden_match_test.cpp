// match_golden: a framework's dump fitted to the model. Names: keys that end one tensor's name
// (tf2onnx's scopes, numbered or not) renamed, a key ending several refused naming them, a key
// matching none left for check_samples to refuse, two keys of one tensor refused. Layout: auto
// transposes NHWC golden values of an NCHW model (checked element by element), keeps those of the
// model's shape, leaves a shape no permutation fits and one the model does not know; a square
// shape is kept by auto and transposed by nhwc; nhwc leaves a tensor permuted otherwise.
#include "data/golden_match.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "backends/backend_test_util.h"
#include "data/samples.h"

namespace onnxdbg {
namespace {

using testing::iota;

/// `text` parsed, with its values renamed by `names` (the ONNX text format has no '/' or ':' in
/// names, tf2onnx's have both).
onnx::ModelProto with_names(const char* text, const std::map<std::string, std::string>& names) {
  onnx::ModelProto m = testing::parse_text_model(text);
  auto rename = [&](std::string* s) {
    if (auto it = names.find(*s); it != names.end()) *s = it->second;
  };
  auto* g = m.mutable_graph();
  for (auto* list : {g->mutable_input(), g->mutable_output()})
    for (auto& vi : *list) rename(vi.mutable_name());
  for (auto& n : *g->mutable_node()) {
    for (auto& i : *n.mutable_input()) rename(&i);
    for (auto& o : *n.mutable_output()) rename(&o);
  }
  return m;
}

constexpr const char* kBlocks = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2] x) => (float[1,2] y)
{
  d3 = Relu(x)
  p3 = Neg(d3)
  d4 = Abs(p3)
  y = Identity(d4)
}
)";

const std::string kD3 = "mobilenetv2_1.00_96_1/block_3_depthwise_1/depthwise:0";
const std::string kP3 = "mobilenetv2_1.00_96_1/block_3_project_1/Conv2D:0";
const std::string kD4 = "mobilenetv2_1.00_96_1/block_4_depthwise_1/depthwise:0";

onnx::ModelProto blocks() {
  return with_names(kBlocks,
                    {{"x", "input_1"}, {"d3", kD3}, {"p3", kP3}, {"d4", kD4}, {"y", "Identity:0"}});
}

Tensor pair(float a, float b) { return Tensor::from_vector<float>({1, 2}, {a, b}); }

const GoldenMatchOptions kSuffix{GoldenNames::kSuffix, GoldenLayout::kAsIs};

TEST(GoldenMatch, SuffixRenamesKeysToTheModelsTensors) {
  const onnx::ModelProto model = blocks();
  // Keras's layer scope (numbered by the converter), the converter's own scope without ":0",
  // and TensorFlow's "Identity" for the graph output "Identity:0".
  std::vector<Sample> golden = {{{"block_3_depthwise/depthwise:0", pair(1, 2)},
                                 {"block_3_project_1/Conv2D", pair(-1, -2)},
                                 {"Identity", pair(1, 2)}}};
  auto r = match_golden(golden, model, kSuffix, "'g.npz'");
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(golden[0].size(), 3u);
  EXPECT_EQ(golden[0].count(kD3), 1u);
  EXPECT_EQ(golden[0].count(kP3), 1u);
  EXPECT_EQ(golden[0].count("Identity:0"), 1u);
  EXPECT_EQ(golden[0].at(kP3).data<float>()[1], -2.f);
  ASSERT_EQ(r->renamed.size(), 3u);
  EXPECT_EQ(r->renamed[0], (std::pair<std::string, std::string>{"Identity", "Identity:0"}));
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0],
            "renamed 3 golden keys of 'g.npz' to the model's tensor names (--golden-names "
            "suffix): 'Identity' -> 'Identity:0', 'block_3_depthwise/depthwise:0' -> '" +
                kD3 + "', 'block_3_project_1/Conv2D' -> '" + kP3 + "'");
  EXPECT_TRUE(check_samples(golden, model.graph(), DataRole::kOutputs, "'g.npz'").is_ok());

  // --golden-names exact: only the ":0" rule; the scoped key is refused as before.
  golden = {{{"block_3_depthwise/depthwise:0", pair(1, 2)}, {"Identity", pair(1, 2)}}};
  r = match_golden(golden, model, {GoldenNames::kExact, GoldenLayout::kAsIs}, "'g.npz'");
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_TRUE(r->notes.empty());
  Status st = check_samples(golden, model.graph(), DataRole::kOutputs, "'g.npz'");
  EXPECT_NE(st.message().find("'block_3_depthwise/depthwise:0', which is not a tensor"),
            std::string::npos)
      << st.message();
}

TEST(GoldenMatch, SuffixEndingSeveralTensorsIsRefusedNamingThem) {
  std::vector<Sample> golden = {{{"depthwise:0", pair(1, 2)}, {"Identity:0", pair(1, 2)}}};
  auto r = match_golden(golden, blocks(), kSuffix, "'g.npz'");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "'g.npz' holds 'depthwise:0', whose name ends the names of 2 tensors of the model "
            "(--golden-names suffix): '" +
                kD3 + "', '" + kD4 + "'; give the key more of its scope so that it names one");
}

TEST(GoldenMatch, SuffixDropsKeysMatchingNothingAndExactLeavesThemToTheCheck) {
  // A framework's dump holds tensors the converter fused away: with suffix they are dropped
  // (and named in a note); with exact, check_samples refuses them as before.
  const onnx::ModelProto model = blocks();
  std::vector<Sample> golden = {{{"block_9/depthwise:0", pair(1, 2)}, {"Identity", pair(1, 2)}}};
  auto r = match_golden(golden, model, kSuffix, "'g.npz'");
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(golden[0].count("block_9/depthwise:0"), 0u);
  EXPECT_EQ(r->dropped, (std::vector<std::string>{"block_9/depthwise:0"}));
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes[0].find("dropped 1 golden key of 'g.npz' that name no tensor of the model"),
            std::string::npos)
      << r->notes[0];
  EXPECT_TRUE(check_samples(golden, model.graph(), DataRole::kOutputs, "'g.npz'"));

  // Nothing but unknown keys: dropped, and the sample without a graph output is refused.
  golden = {{{"block_9/depthwise:0", pair(1, 2)}}};
  ASSERT_TRUE(match_golden(golden, model, kSuffix, "'g.npz'").has_value());
  Status st = check_samples(golden, model.graph(), DataRole::kOutputs, "'g.npz'");
  EXPECT_NE(st.message().find("holds none of the model's outputs"), std::string::npos)
      << st.message();

  golden = {{{"block_9/depthwise:0", pair(1, 2)}, {"Identity", pair(1, 2)}}};
  ASSERT_TRUE(match_golden(golden, model, {}, "'g.npz'").has_value());
  st = check_samples(golden, model.graph(), DataRole::kOutputs, "'g.npz'");
  EXPECT_NE(st.message().find("holds 'block_9/depthwise:0', which is not a tensor of the model"),
            std::string::npos)
      << st.message();
}

TEST(GoldenMatch, TwoKeysOfOneTensorAreRefused) {
  std::vector<Sample> golden = {{{"block_3_depthwise/depthwise:0", pair(1, 2)},
                                 {"block_3_depthwise_1/depthwise", pair(1, 2)},
                                 {"Identity:0", pair(1, 2)}}};
  auto r = match_golden(golden, blocks(), kSuffix, "'g.npz'");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("holds 'block_3_depthwise/depthwise:0' and "
                                      "'block_3_depthwise_1/depthwise', which both name the "
                                      "model's tensor '" +
                                      kD3 + "'"),
            std::string::npos)
      << r.status().message();
}

TEST(GoldenMatch, AScopeOfTheKeysOwnNameWinsOverANumberedOne) {
  const onnx::ModelProto model = with_names(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2] x) => (float[1,2] y)
{
  a = Relu(x)
  b = Neg(a)
  y = Identity(b)
}
)",
                                            {{"a", "m/conv/Relu:0"}, {"b", "m/conv_1/Relu:0"}});
  std::vector<Sample> golden = {{{"conv/Relu:0", pair(1, 2)}, {"y", pair(1, 2)}}};
  auto r = match_golden(golden, model, kSuffix, "'g.npz'");
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(golden[0].count("m/conv/Relu:0"), 1u);
  // Keras's second layer "conv_1" is the converter's scope "conv_1" too.
  golden = {{{"conv_1/Relu:0", pair(1, 2)}, {"y", pair(1, 2)}}};
  ASSERT_TRUE(match_golden(golden, model, kSuffix, "'g.npz'").has_value());
  EXPECT_EQ(golden[0].count("m/conv_1/Relu:0"), 1u);
}

/// NCHW: x 1x3x4x5 -> Conv (2 filters) -> c 1x2x4x5 -> Relu -> y; s = the mean over H and W
/// (1x2); u comes from an op ONNX does not know, so its shape is unknown.
constexpr const char* kConv = R"(
<ir_version: 8, opset_import: ["" : 13, "test.domain" : 1]>
g (float[1,3,4,5] x) => (float[1,2,4,5] y, float[1,2] s)
<float[2,3,1,1] w = {1, 0, 0, 0, 1, 0}>
{
  c = Conv(x, w)
  y = Relu(c)
  s = ReduceMean<axes = [2, 3], keepdims = 0>(y)
  u = test.domain.Custom(y)
}
)";

/// 0, 1, 2, ... in a float tensor of `shape`.
/// Every element of `nchw` against `nhwc` at [n,h,w,c].
void expect_nchw_of(const Tensor& nchw, const Tensor& nhwc) {
  const Shape& s = nhwc.shape();
  ASSERT_EQ(nchw.shape(), (Shape{s[0], s[3], s[1], s[2]}));
  const float* a = nchw.data<float>();
  const float* b = nhwc.data<float>();
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t h = 0; h < s[1]; ++h)
      for (int64_t w = 0; w < s[2]; ++w)
        for (int64_t c = 0; c < s[3]; ++c)
          ASSERT_EQ(a[((n * s[3] + c) * s[1] + h) * s[2] + w],
                    b[((n * s[1] + h) * s[2] + w) * s[3] + c])
              << n << "," << c << "," << h << "," << w;
}

const GoldenMatchOptions kAuto{GoldenNames::kExact, GoldenLayout::kAuto};
const GoldenMatchOptions kNhwc{GoldenNames::kExact, GoldenLayout::kNhwc};

TEST(GoldenMatch, AutoTransposesNhwcGoldenValuesOfAnNchwModel) {
  const onnx::ModelProto model = testing::parse_text_model(kConv);
  const Tensor x = iota({1, 4, 5, 3}), y = iota({1, 4, 5, 2}), s = pair(3, 4);
  // Two samples, decided alike; c's shape is no permutation of the model's; u's is unknown;
  // another backend's output as --save-outputs writes it is left to check_samples (dropped).
  Sample one = {{"x", x},
                {"y", y},
                {"s", s},
                {"c", iota({1, 4, 5, 7})},
                {"u", iota({1, 2})},
                {"onnxruntime/y", y}};
  std::vector<Sample> golden = {one, one};
  auto r = match_golden(golden, model, kAuto, "'g.npz'");
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  for (const Sample& g : golden) {
    expect_nchw_of(g.at("x"), x);
    expect_nchw_of(g.at("y"), y);
    EXPECT_EQ(g.at("s").shape(), (Shape{1, 2}));
    EXPECT_EQ(g.at("s").data<float>()[1], 4.f);
    EXPECT_EQ(g.at("c").shape(), (Shape{1, 4, 5, 7}));
    EXPECT_EQ(g.at("onnxruntime/y").shape(), (Shape{1, 4, 5, 2}));
  }
  ASSERT_EQ(r->permutations.size(), 1u);
  EXPECT_EQ(r->permutations[0].rank, 4u);
  EXPECT_EQ(r->permutations[0].perm, (std::vector<int64_t>{0, 3, 1, 2}));
  EXPECT_EQ(r->permutations[0].transposed, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(r->unfit, (std::vector<std::string>{"c"}));
  EXPECT_EQ(r->unknown_shape, (std::vector<std::string>{"u"}));
  EXPECT_TRUE(r->ambiguous.empty());
  ASSERT_EQ(r->notes.size(), 3u);
  EXPECT_EQ(r->notes[0],
            "transposed 2 golden tensors of 'g.npz' to the model's axis order (--golden-layout "
            "auto): rank 4 by (0,3,1,2) (channels-last to channels-first), 2 tensors: 'x', 'y'");
  EXPECT_EQ(r->notes[1],
            "1 golden tensor's shape is not the model's and no permutation --golden-layout auto "
            "took makes it so; compared as it is: 'c'");
  EXPECT_EQ(r->notes[2],
            "1 golden tensor of rank 2 or more has no shape in the model (declared or inferred); "
            "compared as it is: 'u'");
}

TEST(GoldenMatch, AutoKeepsTensorsOfTheModelsShape) {
  const onnx::ModelProto model = testing::parse_text_model(kConv);
  std::vector<Sample> golden = {{{"x", iota({1, 3, 4, 5})}, {"y", iota({1, 2, 4, 5})}}};
  auto r = match_golden(golden, model, kAuto, "'g.npz'");
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_TRUE(r->permutations.empty());
  EXPECT_EQ(golden[0].at("y").shape(), (Shape{1, 2, 4, 5}));
  EXPECT_EQ(golden[0].at("y").data<float>()[7], 7.f);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "--golden-layout auto: no golden tensor of 'g.npz' needed a transpose");
}

TEST(GoldenMatch, NhwcTransposesOnlyChannelsLastTensors) {
  const onnx::ModelProto model = testing::parse_text_model(kConv);
  const Tensor x = iota({1, 4, 5, 3}), y = iota({1, 4, 5, 2});
  // c's shape is the model's with H and W swapped: a permutation, but not channels-last.
  std::vector<Sample> golden = {{{"x", x}, {"y", y}, {"c", iota({1, 2, 5, 4})}, {"s", pair(1, 2)}}};
  auto r = match_golden(golden, model, kNhwc, "'g.npz'");
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  expect_nchw_of(golden[0].at("x"), x);
  expect_nchw_of(golden[0].at("y"), y);
  EXPECT_EQ(golden[0].at("c").shape(), (Shape{1, 2, 5, 4}));
  EXPECT_EQ(r->unfit, (std::vector<std::string>{"c"}));
  ASSERT_FALSE(r->notes.empty());
  EXPECT_EQ(r->notes[0],
            "transposed 2 golden tensors of 'g.npz' to the model's axis order (--golden-layout "
            "nhwc): rank 4 by (0,3,1,2) (channels-last to channels-first), 2 tensors: 'x', 'y'");
}

TEST(GoldenMatch, ASquareShapeIsKeptByAutoAndTransposedByNhwc) {
  // x is 1x3x3x3: its NHWC golden value has the model's shape, so its shape cannot tell.
  const onnx::ModelProto model = testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,3,3] x) => (float[1,2,3,3] y)
<float[2,3,1,1] w = {1, 0, 0, 0, 1, 0}>
{
  y = Conv(x, w)
}
)");
  const Tensor x = iota({1, 3, 3, 3}), y = iota({1, 3, 3, 2});
  std::vector<Sample> golden = {{{"x", x}, {"y", y}}};
  auto r = match_golden(golden, model, kAuto, "'g.npz'");
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  expect_nchw_of(golden[0].at("y"), y);
  EXPECT_EQ(golden[0].at("x").data<float>()[1], 1.f);  // as it was
  EXPECT_EQ(r->ambiguous, (std::vector<std::string>{"x"}));
  ASSERT_EQ(r->notes.size(), 2u);
  EXPECT_NE(r->notes[1].find("kept as it is: 'x' (--golden-layout nhwc transposes"),
            std::string::npos)
      << r->notes[1];

  golden = {{{"x", x}, {"y", y}}};
  r = match_golden(golden, model, kNhwc, "'g.npz'");
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  expect_nchw_of(golden[0].at("x"), x);
  expect_nchw_of(golden[0].at("y"), y);
}

TEST(GoldenMatch, ASquareShapeTakesTheConvertersPermutationWhenItsTransposesSayIt) {
  // tf2onnx's graph: NHWC input, a Transpose to NCHW, a Conv, a Transpose back to NHWC output.
  // t (1x3x3x3 NCHW) fits both as it is and by (0,3,1,2); the input Transpose says which.
  const onnx::ModelProto model = testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,3,3] x) => (float[1,3,3,3] y)
<float[3,3,1,1] w = {1, 0, 0, 0, 1, 0, 0, 0, 1}>
{
  xt = Transpose<perm = [0, 3, 1, 2]>(x)
  t = Conv(xt, w)
  y = Transpose<perm = [0, 2, 3, 1]>(t)
}
)");
  const Tensor nhwc = iota({1, 3, 3, 3});
  std::vector<Sample> golden = {{{"x", nhwc}, {"t", nhwc}, {"y", nhwc}}};
  auto r = match_golden(golden, model, kAuto, "'g.npz'");
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  expect_nchw_of(golden[0].at("t"), nhwc);
  // The graph input and the output a Transpose back made keep TensorFlow's layout.
  EXPECT_EQ(golden[0].at("x").data<float>()[1], 1.f);
  EXPECT_EQ(golden[0].at("y").data<float>()[1], 1.f);
  EXPECT_TRUE(r->ambiguous.empty());
}

TEST(GoldenMatch, AShapeWithUnitDimensionsAddedIsReshaped) {
  // TensorFlow's Mean keeps no dims (1x3); tf2onnx's GlobalAveragePool keeps them (1x3x1x1).
  const onnx::ModelProto model = testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,2,2] x) => (float[1,3] y)
<int64[2] axes = {2, 3}>
{
  m = GlobalAveragePool(x)
  y = Squeeze(m, axes)
}
)");
  const Tensor mean = iota({1, 3});
  for (const GoldenMatchOptions& o : {kAuto, kNhwc}) {
    std::vector<Sample> golden = {{{"m", mean}, {"y", mean}}};
    auto r = match_golden(golden, model, o, "'g.npz'");
    ASSERT_TRUE(r.has_value()) << r.status().to_string();
    const Tensor& m = golden[0].at("m");
    EXPECT_EQ(m.shape(), (Shape{1, 3, 1, 1}));
    EXPECT_EQ(m.data<float>()[2], mean.data<float>()[2]);
    EXPECT_EQ(r->reshaped, (std::vector<std::string>{"m"}));
    EXPECT_TRUE(r->unfit.empty());
    EXPECT_TRUE(std::any_of(r->notes.begin(), r->notes.end(), [](const std::string& n) {
      return n.find("reshaped 1 golden tensor of 'g.npz' to the model's shape") == 0;
    }));
  }
}

TEST(GoldenMatch, AHintNamesTheSettingsThatWouldFitARefusedDump) {
  const onnx::ModelProto model = with_names(kConv, {{"y", "model_1/act_1/Relu:0"}});
  const std::vector<Sample> golden = {
      {{"act/Relu:0", iota({1, 4, 5, 2})}, {"x", iota({1, 4, 5, 3})}, {"s", pair(1, 2)}}};
  EXPECT_EQ(golden_hint(golden, model, {}),
            "--golden-names suffix would rename 1 key that ends one tensor's name "
            "('act/Relu:0' -> 'model_1/act_1/Relu:0'); --golden-layout auto would transpose 2 "
            "tensors whose shape is the model's with their axes permuted (rank 4 by (0,3,1,2): "
            "'model_1/act_1/Relu:0', 'x')");
  EXPECT_EQ(golden_hint(golden, model, {GoldenNames::kSuffix, GoldenLayout::kAuto}), "");
}

TEST(GoldenMatch, ValuesNamedAsOptionsAre) {
  EXPECT_EQ(kDefaultGoldenNames, GoldenNames::kExact);
  EXPECT_EQ(kDefaultGoldenLayout, GoldenLayout::kAsIs);
  auto bad = golden_layout_from_name("nchw", "--golden-layout");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().message(), "--golden-layout 'nchw' is not one of as-is, auto, nhwc");
  EXPECT_EQ(*golden_names_from_name("suffix", "golden_names"), GoldenNames::kSuffix);
}

}  // namespace
}  // namespace onnxdbg
