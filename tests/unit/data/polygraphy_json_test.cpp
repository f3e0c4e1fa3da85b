// Polygraphy JSON data files: written here by hand the way Polygraphy writes them (base64 of real
// np.save bytes, produced by onnxdbg's own npy writer, wrapped in polygraphy_class objects), then
// read back; base64 against RFC 4648's test vectors; malformed files refused with one sentence.
#include "data/polygraphy_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "data/npy.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

using nlohmann::json;

json ndarray(const Tensor& t) {
  return {{"array", base64_encode(write_npy(t))}, {"polygraphy_class", "ndarray"}};
}

TEST(Base64, Rfc4648Vectors) {
  const std::pair<const char*, const char*> v[] = {{"", ""},
                                                   {"f", "Zg=="},
                                                   {"fo", "Zm8="},
                                                   {"foo", "Zm9v"},
                                                   {"foob", "Zm9vYg=="},
                                                   {"fooba", "Zm9vYmE="},
                                                   {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : v) {
    EXPECT_EQ(base64_encode(plain), coded);
    auto back = base64_decode(coded);
    ASSERT_TRUE(back.has_value()) << coded;
    EXPECT_EQ(*back, plain);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  EXPECT_EQ(*base64_decode(base64_encode(all)), all);
  EXPECT_EQ(*base64_decode("Zm9v\nYmFy"), "foobar");
  EXPECT_FALSE(base64_decode("Zm9").has_value());
  EXPECT_FALSE(base64_decode("Zm9v!").has_value());
  // Padding ends the data; '=' after it shifted by a negative count (fuzz-polygraphy_json).
  EXPECT_EQ(*base64_decode("Zm8="), "fo");
  for (const char* bad : {"Zm8=Zm8=", "Zm8=====", "Zg==\n=", "====", "Zg=a"}) {
    auto r = base64_decode(bad);
    EXPECT_FALSE(r.has_value()) << bad;
  }
  EXPECT_FALSE(base64_decode("Zg==Zg==").has_value());
}

TEST(PolygraphyJson, ReadsAHandWrittenInputList) {
  const Tensor x0 = Tensor::from_vector<float>({1, 3}, {1.5f, -2.0f, 3.25f});
  const Tensor x1 = Tensor::from_vector<float>({1, 3}, {0.0f, 1e-3f, -7.0f});
  const Tensor ids = Tensor::from_vector<int64_t>({2}, {7, -1});
  // What `polygraphy run --save-inputs inputs.json` writes for two iterations.
  const json file = json::array(
      {{{"x", ndarray(x0)}, {"ids", ndarray(ids)}}, {{"x", ndarray(x1)}, {"ids", ndarray(ids)}}});
  auto data = parse_polygraphy_json(file.dump(4), "'inputs.json'");
  ASSERT_TRUE(data.has_value()) << data.status().to_string();
  EXPECT_EQ(data->kind, PolygraphyData::Kind::kInputs);
  ASSERT_EQ(data->runs.size(), 1u);
  const auto& samples = data->runs[0].second;
  ASSERT_EQ(samples.size(), 2u);
  testing::expect_tensor_near(samples[0].at("x"), {1, 3}, {1.5, -2.0, 3.25});
  testing::expect_tensor_near(samples[1].at("x"), {1, 3}, {0.0, 1e-3, -7.0});
  EXPECT_EQ(samples[1].at("ids").dtype(), DType::kInt64);
  EXPECT_EQ(samples[1].at("ids").data<int64_t>()[0], 7);
}

TEST(PolygraphyJson, ReadsHandWrittenRunResultsOfTwoRunners) {
  const Tensor y_trt = Tensor::from_vector<float>({2}, {0.25f, 0.75f});
  const Tensor y_ort = Tensor::from_vector<float>({2}, {0.5f, 0.5f});
  auto iteration = [](const std::string& runner, const Tensor& y, bool lazy) {
    json out = lazy ? json{{"values", ndarray(y)}, {"polygraphy_class", "LazyArray"}} : ndarray(y);
    return json{{"outputs", {{"y", out}}},
                {"runtime", 0.001},
                {"runner_name", runner},
                {"polygraphy_class", "IterationResult"}};
  };
  const json file = {
      {"lst",
       json::array(
           {json::array({"trt-runner-N0", json::array({iteration("trt-runner-N0", y_trt, true)})}),
            json::array({"onnxrt-runner-N0",
                         json::array({iteration("onnxrt-runner-N0", y_ort, false)})})})},
      {"polygraphy_class", "RunResults"}};
  auto data = parse_polygraphy_json(file.dump(), "'outputs.json'");
  ASSERT_TRUE(data.has_value()) << data.status().to_string();
  EXPECT_EQ(data->kind, PolygraphyData::Kind::kRunResults);
  ASSERT_EQ(data->runs.size(), 2u);
  EXPECT_EQ(data->runs[0].first, "trt-runner-N0");
  EXPECT_EQ(data->runs[1].first, "onnxrt-runner-N0");
  testing::expect_tensor_near(data->runs[0].second.at(0).at("y"), {2}, {0.25, 0.75});
  testing::expect_tensor_near(data->runs[1].second.at(0).at("y"), {2}, {0.5, 0.5});
}

TEST(PolygraphyJson, ReadsTheLegacyMarker) {
  const Tensor t = Tensor::from_vector<int32_t>({3}, {1, 2, 3});
  const json file = {{"a",
                      {{"array", base64_encode(write_npy(t))},
                       {"__polygraphy_encoded_ndarray", "polygraphy_serialized_json_type"}}}};
  auto data = parse_polygraphy_json(file.dump(), "'old.json'");
  ASSERT_TRUE(data.has_value()) << data.status().to_string();
  EXPECT_EQ(data->runs[0].second.at(0).at("a").data<int32_t>()[2], 3);
}

TEST(PolygraphyJson, WritersRoundTrip) {
  const std::vector<Sample> samples = {{{"x", Tensor::from_vector<float>({2}, {1, 2})},
                                        {"m", Tensor::from_vector<bool>({1}, {true})}},
                                       {{"x", Tensor::from_vector<float>({2}, {3, 4})},
                                        {"m", Tensor::from_vector<bool>({1}, {false})}}};
  auto in = parse_polygraphy_json(polygraphy_inputs_json(samples), "inputs");
  ASSERT_TRUE(in.has_value()) << in.status().to_string();
  ASSERT_EQ(in->runs[0].second.size(), 2u);
  testing::expect_tensor_near(in->runs[0].second[1].at("x"), {2}, {3, 4});
  EXPECT_FALSE(in->runs[0].second[1].at("m").data<bool>()[0]);
  // The input list is exactly Polygraphy's shape: a list of {name: ndarray}.
  const json j = json::parse(polygraphy_inputs_json(samples));
  EXPECT_EQ(j[0]["x"]["polygraphy_class"], "ndarray");

  auto rr = parse_polygraphy_json(polygraphy_run_results_json({{"onnxdbg", samples}}), "rr");
  ASSERT_TRUE(rr.has_value()) << rr.status().to_string();
  EXPECT_EQ(rr->kind, PolygraphyData::Kind::kRunResults);
  testing::expect_tensor_near(rr->runs[0].second[0].at("x"), {2}, {1, 2});
}

TEST(PolygraphyJson, MalformedFilesAreOneSentence) {
  auto expect_error = [](const std::string& text, ErrorCode code, const std::string& needle) {
    auto r = parse_polygraphy_json(text, "'f.json'");
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  };
  expect_error("{not json", ErrorCode::kInvalidArgument, "'f.json' is not valid JSON");
  expect_error("[]", ErrorCode::kInvalidArgument, "empty list");
  expect_error(R"([{"x": {"array": "@@@@", "polygraphy_class": "ndarray"}}])",
               ErrorCode::kInvalidArgument, "tensor 'x'");
  expect_error(R"([{"x": {"array": "Zm9vYmFy", "polygraphy_class": "ndarray"}}])",
               ErrorCode::kInvalidArgument, "tensor 'x'");
  expect_error(R"([{"x": {"polygraphy_class": "Tensor", "values": []}}])", ErrorCode::kUnsupported,
               "'Tensor'");
  expect_error(R"([{"x": [1, 2, 3]}])", ErrorCode::kInvalidArgument, "not an encoded array");
  expect_error(R"({"polygraphy_class": "RunResults"})", ErrorCode::kInvalidArgument, "\"lst\"");
  expect_error(R"({"polygraphy_class": "RunResults", "lst": [["r", 3]]})",
               ErrorCode::kInvalidArgument, "[runner name, [iterations]]");
}

}  // namespace
}  // namespace onnxdbg
