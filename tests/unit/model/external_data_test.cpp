// External data (model/external_data.h): large external tensors mapped, not read; a model written
// with its data streamed into "<out>.data" (aligned, lengths right, the source itself
// overwritable); inline below the limit; references shared in the source's folder; a model
// loaded from a temp folder with the original's folder as its external data folder.
#include "model/external_data.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include "model/model.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kRows = 512, kCols = 640;  // 1.25 MiB of float32: over the mapping threshold

// y = (x + small) MatMul big: `big` (kRows x kCols) external in "weights.bin" at offset 4096,
// `small` (kRows floats, 2 KiB) inline.
class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = testing::make_temp_dir("onnxdbg_external_data_");
    src_ = tmp_.path() / "src";
    fs::create_directories(src_);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    big_.resize(static_cast<size_t>(kRows * kCols));
    for (auto& v : big_) v = u(rng);
    std::string bytes(4096, '\x55');  // something else before the tensor
    bytes.append(reinterpret_cast<const char*>(big_.data()), big_.size() * sizeof(float));
    std::ofstream(src_ / "weights.bin", std::ios::binary).write(bytes.data(), bytes.size());

    model_ = testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,512] x) => (float[1,640] y) { s = Add(x, small) y = MatMul(s, big) }
)");
    auto* g = model_.mutable_graph();
    std::vector<float> small(kRows);
    for (int64_t i = 0; i < kRows; ++i) small[static_cast<size_t>(i)] = 0.001f * i;
    *g->add_initializer() = tensor_to_proto(Tensor::from_vector<float>({kRows}, small), "small");
    onnx::TensorProto* big = g->add_initializer();
    big->set_name("big");
    big->set_data_type(onnx::TensorProto::FLOAT);
    big->add_dims(kRows);
    big->add_dims(kCols);
    big->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [k, v] : {std::pair<std::string, std::string>{"location", "weights.bin"},
                               {"offset", "4096"},
                               {"length", std::to_string(kRows * kCols * 4)}}) {
      auto* e = big->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    ASSERT_TRUE(save_model(model_, src_ / "model.onnx").is_ok());
  }

  // The initializer `name` of the model at `path`, read with its external data.
  std::vector<float> values(const fs::path& path, const std::string& name) {
    auto m = load_model(path);
    EXPECT_TRUE(m.has_value()) << m.status().to_string();
    if (!m) return {};
    for (const auto& t : m->proto.graph().initializer())
      if (t.name() == name) {
        auto v = tensor_from_proto(t, m->base_dir);
        EXPECT_TRUE(v.has_value()) << v.status().to_string();
        if (!v) return {};
        return std::vector<float>(v->data<float>(), v->data<float>() + v->numel());
      }
    ADD_FAILURE() << "no initializer " << name;
    return {};
  }

  static const onnx::TensorProto& initializer(const onnx::ModelProto& m, const std::string& name) {
    for (const auto& t : m.graph().initializer())
      if (t.name() == name) return t;
    throw std::runtime_error("no initializer " + name);
  }

  TempDir tmp_;
  fs::path src_;
  onnx::ModelProto model_;
  std::vector<float> big_;
};

TEST_F(ExternalData, LargeTensorIsMappedWithTheFileBytes) {
  auto region = map_file_region(src_ / "weights.bin", 4096, kRows * kCols * 4);
  ASSERT_TRUE(region.has_value()) << region.status().to_string();
  ASSERT_EQ(region->size(), static_cast<size_t>(kRows * kCols * 4));
  EXPECT_EQ(0, std::memcmp(region->data(), big_.data(), region->size()));
  EXPECT_EQ(values(src_ / "model.onnx", "big"), big_);
}

TEST_F(ExternalData, OverTheLimitTheDataIsStreamedBesideTheModel) {
  const fs::path out = tmp_.path() / "out" / "copy.onnx";
  fs::create_directories(out.parent_path());
  ASSERT_TRUE(save_model_with_external_data(model_, src_, out, false, /*inline_limit=*/0).is_ok());
  ASSERT_TRUE(fs::exists(tmp_.path() / "out" / "copy.onnx.data"));
  auto m = load_model(out);
  ASSERT_TRUE(m.has_value()) << m.status().to_string();
  for (const char* name : {"big", "small"}) {  // both over 1 KiB: both external now
    const auto& t = initializer(m->proto, name);
    ASSERT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL) << name;
    auto ext = external_data(t, m->base_dir);
    ASSERT_TRUE(ext.has_value());
    EXPECT_EQ(ext->location, "copy.onnx.data");
    EXPECT_GT(ext->length, 0) << name << ": a length of 0 made the written model unreadable";
  }
  auto big = external_data(initializer(m->proto, "big"), m->base_dir);
  EXPECT_EQ(big->offset % 4096, 0) << "large tensors start on a page";
  EXPECT_EQ(big->length, kRows * kCols * 4);
  EXPECT_EQ(values(out, "big"), big_);
  EXPECT_FLOAT_EQ(values(out, "small").at(100), 0.1f);
}

TEST_F(ExternalData, TheSourceModelCanBeOverwrittenInPlace) {
  // "<model>.data" is both read (the source's data) and written: the new file replaces it only
  // once complete.
  const fs::path out = src_ / "model.onnx";
  ASSERT_TRUE(save_model_with_external_data(model_, src_, out, false, 0).is_ok());
  ASSERT_TRUE(save_model_with_external_data(load_model(out)->proto, src_, out, false, 0).is_ok());
  EXPECT_EQ(values(out, "big"), big_);
}

TEST_F(ExternalData, UnderTheLimitTheModelIsSelfContained) {
  const fs::path out = tmp_.path() / "inline.onnx";
  ASSERT_TRUE(save_model_with_external_data(model_, src_, out).is_ok());
  auto m = load_model(out);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(external_data_locations(m->proto.graph()).empty());
  EXPECT_FALSE(fs::exists(tmp_.path() / "inline.onnx.data"));
  EXPECT_EQ(values(out, "big"), big_);
}

TEST_F(ExternalData, ASelfContainedModelReplacingOneWithDataRemovesTheStaleDataFile) {
  // reduce rewrites its result as it shrinks: first over the limit (with "<out>.data"), then
  // small enough to be inline; the old data file must not stay behind.
  const fs::path out = tmp_.path() / "result.onnx";
  ASSERT_TRUE(save_model_with_external_data(model_, src_, out, false, 0).is_ok());
  ASSERT_TRUE(fs::exists(tmp_.path() / "result.onnx.data"));
  ASSERT_TRUE(save_model_with_external_data(model_, src_, out).is_ok());
  EXPECT_FALSE(fs::exists(tmp_.path() / "result.onnx.data"));
  EXPECT_EQ(values(out, "big"), big_);
}

TEST_F(ExternalData, InTheSourceFolderReferencesAreSharedWhenAsked) {
  const fs::path out = src_ / "reduced.onnx";
  ASSERT_TRUE(save_model_with_external_data(model_, src_, out, /*share_source_data=*/true).is_ok());
  auto m = load_model(out);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(external_data_locations(m->proto.graph()), std::vector<std::string>{"weights.bin"});
  EXPECT_LT(fs::file_size(out), 16384u) << "no weights copied";
  EXPECT_EQ(values(out, "big"), big_);
}

TEST_F(ExternalData, InliningRefusesWhatWouldPassTheLimit) {
  onnx::ModelProto m = model_;
  Status st = inline_external_data(m, src_, /*limit=*/1 << 20);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(initializer(m, "big").data_location(), onnx::TensorProto::EXTERNAL) << "left as it was";
  ASSERT_TRUE(inline_external_data(m, src_).is_ok());
  EXPECT_EQ(initializer(m, "big").raw_data().size(), static_cast<size_t>(kRows * kCols * 4));
}

TEST_F(ExternalData, AModelInATempFolderReadsTheOriginalsData) {
  const fs::path moved = tmp_.path() / "elsewhere.onnx";
  ASSERT_TRUE(save_model(model_, moved).is_ok());
  EXPECT_FALSE(load_model(moved).has_value()) << "its data is not beside it";
  auto m = load_model(moved, src_);
  ASSERT_TRUE(m.has_value()) << m.status().to_string();
  EXPECT_EQ(m->base_dir, src_);
}

}  // namespace
}  // namespace onnxdbg
