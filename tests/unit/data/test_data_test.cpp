// Tests of ONNX test-data folders (input_K.pb / output_K.pb) against the ONNX conformance data
// shipped by Debian's libonnx-testdata, and of load_tensors' dispatch on the path given.
#include "data/test_data.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../test_util.h"
#include "data/npy.h"
#include "data/npz.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

const fs::path kNodeData = "/usr/share/libonnx-testdata/data/node";

LoadedModel load_or_skip(const std::string& test) {
  auto m = load_model(kNodeData / test / "model.onnx");
  EXPECT_TRUE(m.has_value()) << m.status().to_string();
  return m ? std::move(*m) : LoadedModel{};
}

TEST(TestData, LoadsConformanceAdd) {
  if (!fs::exists(kNodeData / "test_add")) GTEST_SKIP() << "libonnx-testdata not installed";
  const LoadedModel m = load_or_skip("test_add");
  const fs::path dir = kNodeData / "test_add" / "test_data_set_0";
  auto in = load_test_data_inputs(dir, m.proto.graph());
  ASSERT_TRUE(in.has_value()) << in.status().to_string();
  ASSERT_EQ(in->size(), 2u);
  ASSERT_TRUE(in->count("x") && in->count("y"));
  EXPECT_EQ(in->at("x").dtype(), DType::kFloat);
  EXPECT_EQ(in->at("x").shape(), (Shape{3, 4, 5}));
  auto out = load_test_data_outputs(dir, m.proto.graph());
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  ASSERT_EQ(out->size(), 1u);
  const Tensor& sum = out->at("sum");
  for (int64_t i = 0; i < sum.numel(); ++i)
    EXPECT_FLOAT_EQ(
        static_cast<float>(sum.get_as_double(i)),
        static_cast<float>(in->at("x").get_as_double(i) + in->at("y").get_as_double(i)));
}

TEST(TestData, SaveLoadRoundTrip) {
  if (!fs::exists(kNodeData / "test_add")) GTEST_SKIP() << "libonnx-testdata not installed";
  const LoadedModel m = load_or_skip("test_add");
  const fs::path src = kNodeData / "test_add" / "test_data_set_0";
  auto in = load_test_data_inputs(src, m.proto.graph());
  auto out = load_test_data_outputs(src, m.proto.graph());
  ASSERT_TRUE(in.has_value() && out.has_value());
  const fs::path dir = testing::fresh_dir("roundtrip");
  std::ofstream(dir / "input_7.pb") << "stale";  // must be removed by save_test_data
  ASSERT_TRUE(save_test_data(dir, m.proto.graph(), *in, *out).is_ok());
  EXPECT_FALSE(fs::exists(dir / "input_7.pb"));
  auto in2 = load_test_data_inputs(dir, m.proto.graph());
  auto out2 = load_test_data_outputs(dir, m.proto.graph());
  ASSERT_TRUE(in2.has_value()) << in2.status().to_string();
  ASSERT_TRUE(out2.has_value()) << out2.status().to_string();
  for (const auto& [name, t] : *in)
    testing::expect_tensor_near(in2->at(name), t.shape(), testing::values(t), 0, 0);
  for (const auto& [name, t] : *out)
    testing::expect_tensor_near(out2->at(name), t.shape(), testing::values(t), 0, 0);

  std::map<std::string, Tensor> wrong;
  wrong.emplace("not_an_input", Tensor::scalar<float>(1));
  const Status st = save_test_data(dir, m.proto.graph(), wrong, {});
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.to_string().find("not_an_input"), std::string::npos);
}

TEST(TestData, UnnamedProtosTakeGraphNamesByPosition) {
  const auto model = testing::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] a, int64[1] b) => (float[2] c) { c = Identity(a) }
  )");
  const fs::path dir = testing::fresh_dir("unnamed");
  {
    std::ofstream f0(dir / "input_0.pb", std::ios::binary);
    tensor_to_proto(Tensor::from_vector<float>({2}, {1, 2})).SerializeToOstream(&f0);
    std::ofstream f1(dir / "input_1.pb", std::ios::binary);
    tensor_to_proto(Tensor::from_vector<int64_t>({1}, {5})).SerializeToOstream(&f1);
    std::ofstream f2(dir / "input_2.pb", std::ios::binary);
    tensor_to_proto(Tensor::from_vector<int64_t>({1}, {6})).SerializeToOstream(&f2);
  }
  auto in = load_test_data_inputs(dir, model.graph());
  ASSERT_FALSE(in.has_value()) << "input_2.pb has no name and no third graph input";
  EXPECT_NE(in.status().to_string().find("input_2.pb"), std::string::npos)
      << in.status().to_string();
  fs::remove(dir / "input_2.pb");
  in = load_test_data_inputs(dir, model.graph());
  ASSERT_TRUE(in.has_value()) << in.status().to_string();
  testing::expect_tensor_near(in->at("a"), {2}, {1, 2});
  testing::expect_tensor_near(in->at("b"), {1}, {5});
}

TEST(TestData, BadFilesAndSequencesGiveErrors) {
  const auto model = testing::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] a) => (float[2] c) { c = Identity(a) }
  )");
  auto none = load_test_data_inputs(testing::fresh_dir("empty"), model.graph());
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.status().code(), ErrorCode::kNotFound);

  const fs::path dir = testing::fresh_dir("garbage");
  std::ofstream(dir / "input_0.pb") << "\xff\xff\xff garbage";
  auto bad = load_test_data_inputs(dir, model.graph());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().to_string().find("input_0.pb"), std::string::npos)
      << bad.status().to_string();

  if (!fs::exists(kNodeData / "test_identity_sequence"))
    GTEST_SKIP() << "libonnx-testdata not installed";
  const LoadedModel seq = load_or_skip("test_identity_sequence");
  auto s = load_test_data_inputs(kNodeData / "test_identity_sequence" / "test_data_set_0",
                                 seq.proto.graph());
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.status().to_string().find("sequence"), std::string::npos) << s.status().to_string();
}

TEST(TestData, EveryConformanceFolderLoadsOrIsUnsupported) {
  if (!fs::exists(kNodeData)) GTEST_SKIP() << "libonnx-testdata not installed";
  int loaded = 0;
  for (const auto& test : fs::directory_iterator(kNodeData)) {
    auto m = load_model(test.path() / "model.onnx");
    if (!m) continue;
    for (const auto& set : fs::directory_iterator(test.path())) {
      if (!set.is_directory()) continue;
      for (bool inputs : {true, false}) {
        auto r = inputs ? load_test_data_inputs(set.path(), m->proto.graph())
                        : load_test_data_outputs(set.path(), m->proto.graph());
        if (r) {
          ++loaded;
          continue;
        }
        // Some tests have no inputs at all (input_K.pb absent): kNotFound is right there.
        EXPECT_TRUE(r.status().code() == ErrorCode::kUnsupported ||
                    r.status().code() == ErrorCode::kNotFound)
            << set.path() << ": " << r.status().to_string();
      }
    }
  }
  EXPECT_GT(loaded, 1000);
}

TEST(LoadTensors, DispatchesOnPath) {
  const auto one = testing::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] a) => (float[2] c) { c = Identity(a) }
  )");
  const auto two = testing::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] a, float[2] b) => (float[2] c) { c = Add(a, b) }
  )");
  const fs::path dir = testing::fresh_dir("dispatch");
  const Tensor t = Tensor::from_vector<float>({2}, {3, 4});

  ASSERT_TRUE(save_npy(dir / "a.npy", t).is_ok());
  auto npy = load_tensors(dir / "a.npy", one.graph());
  ASSERT_TRUE(npy.has_value()) << npy.status().to_string();
  testing::expect_tensor_near(npy->at("a"), {2}, {3, 4});
  auto npy2 = load_tensors(dir / "a.npy", two.graph());
  ASSERT_FALSE(npy2.has_value());
  EXPECT_NE(npy2.status().to_string().find("2 inputs"), std::string::npos)
      << npy2.status().to_string();

  std::map<std::string, Tensor> named;
  named.emplace("a", t);
  named.emplace("b", t);
  ASSERT_TRUE(save_npz(dir / "ab.npz", named).is_ok());
  auto npz = load_tensors(dir / "ab.npz", two.graph());
  ASSERT_TRUE(npz.has_value()) << npz.status().to_string();
  EXPECT_EQ(npz->size(), 2u);

  {
    std::ofstream f(dir / "b.pb", std::ios::binary);
    tensor_to_proto(t, "b").SerializeToOstream(&f);
    std::ofstream g(dir / "unnamed.pb", std::ios::binary);
    tensor_to_proto(t).SerializeToOstream(&g);
  }
  auto pb = load_tensors(dir / "b.pb", two.graph());
  ASSERT_TRUE(pb.has_value()) << pb.status().to_string();
  EXPECT_TRUE(pb->count("b"));
  auto unnamed = load_tensors(dir / "unnamed.pb", one.graph());
  ASSERT_TRUE(unnamed.has_value()) << unnamed.status().to_string();
  EXPECT_TRUE(unnamed->count("a"));

  const fs::path set = dir / "test_data_set_0";
  ASSERT_TRUE(save_test_data(set, two.graph(), named, {}).is_ok());
  auto folder = load_tensors(set, two.graph());
  ASSERT_TRUE(folder.has_value()) << folder.status().to_string();
  EXPECT_EQ(folder->size(), 2u);

  auto missing = load_tensors(dir / "missing.npz", one.graph());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  std::ofstream(dir / "x.csv") << "1,2";
  auto csv = load_tensors(dir / "x.csv", one.graph());
  ASSERT_FALSE(csv.has_value());
  EXPECT_NE(csv.status().to_string().find("not a known input format"), std::string::npos);
}

}  // namespace
}  // namespace onnxdbg
