// Constant folding: a Shape->Gather->Unsqueeze->Concat->Reshape chain after overriding input
// shapes, chains of Constant arithmetic, the size limit, non-deterministic ops, and external data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "model/external_data.h"
#include "surgeon_test_util.h"

namespace onnxdbg::surgeon {
namespace {

using namespace testing;

const char* kShapeChain = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[N,3,4,4] x) => (float[N,?] y)
<int64[1] zero = {0}, int64[1] minus1 = {-1}, int64[1] axes = {0}>
{
  s = Shape(x)
  b = Gather<axis=0>(s, zero)
  bs = Squeeze(b, axes)
  bu = Unsqueeze(bs, axes)
  shp = Concat<axis=0>(bu, minus1)
  two = Constant<value = float {2.0}>()
  three = Constant<value = float {3.0}>()
  six = Mul(two, three)
  r = Reshape(x, shp)
  y = Mul(r, six)
})";

TEST(FoldConstants, ShapeChainFoldsAfterOverridingInputShapes) {
  auto m = parse_text_model(kShapeChain);
  const auto original = m;
  SanitizeOptions opt;
  opt.input_shapes["x"] = {2, 3, 4, 4};
  opt.fold_constants = true;
  opt.cleanup = true;
  auto rep = sanitize(m, {}, opt);
  ASSERT_TRUE(rep.has_value()) << rep.status().to_string();
  EXPECT_EQ(m.graph().node_size(), 2) << rep->summary();  // Reshape and Mul remain
  EXPECT_EQ(count_op(m, "Reshape"), 1);
  EXPECT_EQ(rep->fold->nodes_folded, 8);
  EXPECT_EQ(rep->fold->initializers_added, 2);  // shp and six
  EXPECT_NE(rep->summary().find("folded 8 nodes into 2 initializers"), std::string::npos)
      << rep->summary();
  EXPECT_NE(rep->summary().find("10 -> 2 nodes"), std::string::npos) << rep->summary();
  // The output shape is now static (value_info refreshed).
  const auto& out = m.graph().output(0).type().tensor_type().shape();
  ASSERT_EQ(out.dim_size(), 2);
  EXPECT_EQ(out.dim(0).dim_value(), 2);
  EXPECT_EQ(out.dim(1).dim_value(), 48);
  expect_lint_clean(m);
  expect_same_outputs(original, m, {{"x", ramp({2, 3, 4, 4})}});
}

TEST(FoldConstants, WithoutStaticShapeOnlyConstantsFold) {
  auto m = parse_text_model(kShapeChain);
  auto st = fold_constants(m, {});
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->nodes_folded, 3);  // two, three, six; Shape(x) of a dynamic x stays
  EXPECT_EQ(count_op(m, "Shape"), 1);
}

TEST(FoldConstants, SizeLimitKeepsLargeOutputs) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[64,64] x) => (float[64,64] y)
<int64[2] shape = {64, 64}>
{
  big = ConstantOfShape<value = float[1] {1.5}>(shape)
  y = Add(x, big)
})");
  const auto original = m;
  FoldOptions opt;
  opt.size_limit = 1024;
  auto st = fold_constants(m, {}, opt);
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->nodes_folded, 0);
  EXPECT_EQ(st->skipped_large, 1);
  EXPECT_EQ(count_op(m, "ConstantOfShape"), 1);
  auto st2 = fold_constants(m, {});  // no limit
  ASSERT_TRUE(st2.has_value());
  EXPECT_EQ(st2->nodes_folded, 1);
  expect_same_outputs(original, m, {{"x", ramp({64, 64})}});
}

TEST(FoldConstants, NonDeterministicOpsStay) {
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y)
{
  r = RandomUniform<shape = [2], dtype = 1>()
  one = Constant<value = float {1.0}>()
  s = Add(r, one)
  y = Add(x, s)
})");
  auto st = fold_constants(m, {});
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->nodes_folded, 1);  // only the Constant
  EXPECT_EQ(count_op(m, "RandomUniform"), 1);
  EXPECT_EQ(m.graph().node_size(), 3);
}

TEST(FoldConstants, ExternalInitializersAreReadAndWrittenInline) {
  namespace fs = std::filesystem;
  const TempDir tmp = onnxdbg::testing::make_temp_dir("onnxdbg_fold_");
  const fs::path dir = tmp.path();
  fs::create_directories(dir / "out");
  auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4] x) => (float[4] y)
<float[4] w = {1.0, 2.0, 3.0, 4.0}>
{
  two = Constant<value = float {2.0}>()
  w2 = Mul(w, two)
  y = Add(x, w2)
})");
  const auto original = m;
  // Move w to an external file next to the model.
  auto* w = m.mutable_graph()->mutable_initializer(0);
  const std::vector<float> wv{1, 2, 3, 4};
  {
    std::ofstream f(dir / "w.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(wv.data()), 16);
  }
  w->clear_float_data();
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = w->add_external_data();
  e->set_key("location");
  e->set_value("w.bin");
  ASSERT_TRUE(save_model(m, dir / "model.onnx").is_ok());

  auto loaded = load_model(dir / "model.onnx");
  ASSERT_TRUE(loaded.has_value()) << loaded.status().to_string();
  auto st = fold_constants(loaded->proto, loaded->base_dir);
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->nodes_folded, 2);
  ASSERT_TRUE(finish_edit(loaded->proto, loaded->base_dir).is_ok());
  ASSERT_TRUE(
      save_model_with_external_data(loaded->proto, loaded->base_dir, dir / "out" / "folded.onnx")
          .is_ok());
  auto again = load_model(dir / "out" / "folded.onnx");
  ASSERT_TRUE(again.has_value()) << again.status().to_string();
  expect_same_outputs(original, again->proto, {{"x", ramp({4})}});
}

TEST(OverrideInputShapes, RefusesWrongNamesAndContradictions) {
  auto m = parse_text_model(kShapeChain);
  auto st = override_input_shapes(m, {{"nope", {1}}});
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("'nope'"), std::string::npos) << st.message();
  st = override_input_shapes(m, {{"x", {1, 4, 4, 4}}});
  EXPECT_NE(st.message().find("static dim 1"), std::string::npos) << st.message();
  st = override_input_shapes(m, {{"x", {1, 3}}});
  EXPECT_NE(st.message().find("rank"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace onnxdbg::surgeon
