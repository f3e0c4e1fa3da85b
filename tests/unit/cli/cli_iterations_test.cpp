// `onnxdbg run` with several input samples (--iterations N, multi-sample --load-inputs) through
// the real binary and real ONNX Runtime: every sample is run and reported on its own, the verdict
// names the samples that fail, saved inputs/outputs round-trip as Polygraphy JSON, and bad input
// is one sentence with exit status 2 and nothing written.
#include <gtest/gtest.h>

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

// Log: NaN for a negative input, so a sample's values decide whether --validate fails.
const char* kLogModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (float[1,3] y)
{
  h = Relu(x)
  y = Log(x)
}
)";

// Gather: an index past the end fails the run on every backend, for that sample only.
const char* kGatherModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3] x, int64[1] i) => (float[1] y)
{
  y = Gather(x, i)
}
)";

std::vector<double> values_of(const Tensor& t) { return testing::values(t); }

class CliIterations : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    write_model("log.onnx", kLogModel);
  }
  void write(const std::string& name, const json& j) { std::ofstream(dir_ / name) << j.dump(); }
  std::vector<Sample> load_json(const std::string& name) {
    auto d = load_polygraphy_json(dir_ / name);
    EXPECT_TRUE(d.has_value()) << d.status().to_string();
    return d ? d->runs.at(0).second : std::vector<Sample>{};
  }
};

TEST_F(CliIterations, EachGeneratedSampleIsRunAndReportedApart) {
  auto r = run_cli(
      "run log.onnx --backends reference,onnxruntime --iterations 3 --seed 7 --json "
      "--save-inputs in.json --save-outputs out.json",
      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "agree");
  EXPECT_EQ(j["verdict_line"].get<std::string>().rfind("all 3 samples agree: ", 0), 0u) << j;
  EXPECT_EQ(j["sample_count"], 3);
  EXPECT_TRUE(j["failing_samples"].empty());
  EXPECT_TRUE(j["comparisons"].empty());  // per sample only, never merged
  ASSERT_EQ(j["samples"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const auto& s = j["samples"][i];
    EXPECT_EQ(s["sample"], i);
    EXPECT_EQ(s["seed"], 7 + i);
    EXPECT_EQ(s["verdict"], "agree");
    ASSERT_EQ(s["comparisons"].size(), 1u) << s;
    EXPECT_EQ(s["comparisons"][0]["backend"], "onnxruntime");
  }
  for (const auto& b : j["backends"]) EXPECT_TRUE(b["failed_samples"].empty()) << b;

  // The saved inputs are three different samples; sample 0 is a one-sample run's input with the
  // same seed, and --sample 2 runs seed + 2 alone.
  const auto in = load_json("in.json");
  ASSERT_EQ(in.size(), 3u);
  EXPECT_NE(values_of(in[0].at("x")), values_of(in[1].at("x")));
  EXPECT_NE(values_of(in[1].at("x")), values_of(in[2].at("x")));
  EXPECT_NE(values_of(in[0].at("x")), values_of(in[2].at("x")));
  auto one = run_cli("run log.onnx --backends reference --seed 7 --save-inputs one.npz", dir_);
  ASSERT_EQ(one.exit_code, 0) << one.out << one.err;
  auto one_in = load_npz(dir_ / "one.npz");
  ASSERT_TRUE(one_in.has_value());
  EXPECT_EQ(values_of(one_in->at("x")), values_of(in[0].at("x")));
  auto seed9 = run_cli("run log.onnx --backends reference --seed 9 --save-inputs 9.npz", dir_);
  ASSERT_EQ(seed9.exit_code, 0) << seed9.out << seed9.err;
  auto seed9_in = load_npz(dir_ / "9.npz");
  ASSERT_TRUE(seed9_in.has_value());
  EXPECT_EQ(values_of(seed9_in->at("x")), values_of(in[2].at("x")));  // seed 7 + 2
  auto third = run_cli(
      "run log.onnx --backends reference --seed 7 --iterations 3 --sample 2 --save-inputs 2.npz",
      dir_);
  ASSERT_EQ(third.exit_code, 0) << third.out << third.err;
  EXPECT_NE(third.err.find("running sample 2"), std::string::npos) << third.err;
  auto third_in = load_npz(dir_ / "2.npz");
  ASSERT_TRUE(third_in.has_value());
  EXPECT_EQ(values_of(third_in->at("x")), values_of(in[2].at("x")));

  // The saved outputs: Polygraphy's RunResults, one runner per backend with one iteration per
  // sample; they load back as golden outputs (the first runner's), sample i against sample i.
  auto saved = load_polygraphy_json(dir_ / "out.json");
  ASSERT_TRUE(saved.has_value()) << saved.status().to_string();
  EXPECT_EQ(saved->kind, PolygraphyData::Kind::kRunResults);
  ASSERT_EQ(saved->runs.size(), 2u);
  EXPECT_EQ(saved->runs[0].first, "reference");
  EXPECT_EQ(saved->runs[1].first, "onnxruntime");
  for (const auto& [runner, iterations] : saved->runs) {
    ASSERT_EQ(iterations.size(), 3u) << runner;
    for (const auto& s : iterations) EXPECT_TRUE(s.count("y")) << runner;
  }
  auto again = run_cli(
      "run log.onnx --backends onnxruntime --load-inputs in.json --load-outputs out.json --json",
      dir_);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  auto ja = json::parse(again.out);
  ASSERT_EQ(ja["samples"].size(), 3u);
  for (const auto& s : ja["samples"]) {
    EXPECT_EQ(s["seed"], nullptr);
    ASSERT_EQ(s["comparisons"].size(), 1u);
    EXPECT_EQ(s["comparisons"][0]["against"], "loaded:file=out.json");
    EXPECT_EQ(s["comparisons"][0]["max_abs_error"], 0.0);
  }
  // The same outputs against the samples in another order disagree on the moved samples.
  write("swapped.json", json::array({{{"x", testing::polygraphy_ndarray(in[0].at("x"))}},
                                     {{"x", testing::polygraphy_ndarray(in[2].at("x"))}},
                                     {{"x", testing::polygraphy_ndarray(in[1].at("x"))}}}));
  auto swapped = run_cli(
      "run log.onnx --backends onnxruntime --load-inputs swapped.json --load-outputs out.json",
      dir_);
  EXPECT_EQ(swapped.exit_code, 1) << swapped.out << swapped.err;
  EXPECT_NE(swapped.out.find("DISAGREE: outputs differ on 2 of 3 samples (1, 2); sample 1: "),
            std::string::npos)
      << swapped.out;
}

TEST_F(CliIterations, OnlyTheSampleWithNaNFails) {
  write("in.json", json::array({{{"x", testing::polygraphy_ndarray(row(1, 2, 3))}},
                                {{"x", testing::polygraphy_ndarray(row(1, -2, 3))}},
                                {{"x", testing::polygraphy_ndarray(row(0.5f, 4, 8))}}}));
  auto r = run_cli(
      "run log.onnx --backends reference,onnxruntime --load-inputs in.json --validate "
      "--html page.html",
      dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("samples: 3, from 'in.json'; each compared on its own"), std::string::npos)
      << r.out;
  for (const char* heading : {"=== sample 0 of 3 ===", "=== sample 1 of 3 ===",
                              "=== sample 2 of 3 ===", "=== all 3 samples ==="})
    EXPECT_NE(r.out.find(heading), std::string::npos) << heading << "\n" << r.out;
  EXPECT_NE(r.out.find("sample 0: AGREE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sample 1: DISAGREE: output 'y' of reference has 1 NaN/Inf values"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("sample 2: AGREE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nDISAGREE: NaN/Inf (--validate) on 1 of 3 samples (1); sample 1: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("the HTML page shows sample 1 of 3 (the first that disagrees)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "page.html"));

  auto j = json::parse(run_cli("run log.onnx --backends reference,onnxruntime --load-inputs "
                               "in.json --validate --json",
                               dir_)
                           .out);
  EXPECT_EQ(j["verdict"], "disagree");
  EXPECT_EQ(j["failing_samples"], json::array({1}));
  EXPECT_EQ(j["samples"][0]["verdict"], "agree");
  EXPECT_EQ(j["samples"][1]["verdict"], "disagree");
  EXPECT_EQ(j["samples"][1]["validation"].size(), 2u);  // reference and onnxruntime
  EXPECT_EQ(j["samples"][2]["verdict"], "agree");

  // --sample 2 runs that sample alone, as one sample: today's report, which agrees.
  auto alone = run_cli(
      "run log.onnx --backends reference,onnxruntime --load-inputs in.json --validate --sample 2 "
      "--json",
      dir_);
  EXPECT_EQ(alone.exit_code, 0) << alone.out << alone.err;
  EXPECT_FALSE(json::parse(alone.out).contains("samples"));
}

TEST_F(CliIterations, ABackendFailingOnOneSampleStillRunsTheOthers) {
  ASSERT_TRUE(save_model(testing::parse_text_model(kGatherModel), dir_ / "gather.onnx").is_ok());
  auto x = [](float a) {
    return testing::polygraphy_ndarray(Tensor::from_vector<float>({3}, {a, a + 1, a + 2}));
  };
  auto i = [](int64_t v) {
    return testing::polygraphy_ndarray(Tensor::from_vector<int64_t>({1}, {v}));
  };
  write("in.json",
        json::array(
            {{{"x", x(1)}, {"i", i(0)}}, {{"x", x(2)}, {"i", i(7)}}, {{"x", x(3)}, {"i", i(2)}}}));
  auto r = run_cli("run gather.onnx --backends reference,onnxruntime --load-inputs in.json --json",
                   dir_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "error");
  EXPECT_EQ(j["verdict_line"].get<std::string>().rfind(
                "could not run every backend on 1 of 3 samples (1); sample 1: could not run on "
                "reference (run), onnxruntime (run)",
                0),
            0u)
      << j["verdict_line"];
  for (size_t s : {0, 2}) {
    EXPECT_EQ(j["samples"][s]["verdict"], "agree") << s;
    EXPECT_EQ(j["samples"][s]["comparisons"][0]["pass"], true) << s;
  }
  EXPECT_EQ(j["samples"][1]["backends"][1]["failed_stage"], "run");
  EXPECT_EQ(j["backends"][1]["status"], "failed");
  EXPECT_EQ(j["backends"][1]["failed_samples"], json::array({1}));
}

TEST_F(CliIterations, LayerwiseRunsOnEverySample) {
  ASSERT_TRUE(save_model(testing::parse_text_model(testing::demo_model_text()), dir_ / "demo.onnx")
                  .is_ok());
  auto r = run_cli(
      "run demo.onnx --backends reference,opencv --iterations 2 --layerwise --isolate --json",
      dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["failing_samples"], json::array({0, 1}));
  ASSERT_EQ(j["samples"].size(), 2u);
  for (const auto& s : j["samples"]) {
    EXPECT_EQ(s["layerwise"].size(), 4u) << s;
    ASSERT_TRUE(s["first_divergent_node"].is_object()) << s;
    EXPECT_EQ(s["first_divergent_node"]["op_type"], "Softmax");
  }
  // The repro folder is written once, for the first sample with a divergent node.
  EXPECT_TRUE(j["samples"][0]["first_divergent_node"]["repro"].is_string());
  EXPECT_TRUE(j["samples"][1]["first_divergent_node"]["repro"].is_null());
  ASSERT_TRUE(j["first_divergent_node"].is_object());
  EXPECT_EQ(j["first_divergent_node"]["sample"], 0);
  EXPECT_TRUE(
      fs::exists(dir_ / j["first_divergent_node"]["repro"].get<std::string>() / "model.onnx"));
  // `view --report` of it paints one sample, and says which.
  std::ofstream(dir_ / "run.json") << r.out;
  auto view = run_cli("view demo.onnx --report run.json -o page.html", dir_);
  EXPECT_EQ(view.exit_code, 0) << view.out << view.err;
  EXPECT_NE(view.err.find("'run.json' holds 2 samples; the page shows sample 0 (the first that "
                          "disagrees)"),
            std::string::npos)
      << view.err;
}

TEST_F(CliIterations, BadInputIsOneSentenceAndWritesNothing) {
  write("in.json", json::array({{{"x", testing::polygraphy_ndarray(row(1, 2, 3))}},
                                {{"x", testing::polygraphy_ndarray(row(4, 5, 6))}}}));
  expect_usage_error(run_cli("run log.onnx --iterations 0", dir_),
                     "--iterations must be at least 1");
  expect_usage_error(run_cli("run log.onnx --iterations 2 --load-inputs in.json", dir_),
                     "'in.json' (--load-inputs) already decides them");
  expect_usage_error(run_cli("run log.onnx --load-inputs in.json --sample 2", dir_),
                     "--sample 2: 'in.json' holds 2 sample(s)");
  expect_usage_error(run_cli("run log.onnx --iterations 3 --sample 3", dir_),
                     "--sample 3: the generated inputs are 3 sample(s), 0 to 2");
  expect_usage_error(
      run_cli("run log.onnx --iterations 2 --save-inputs x.npz --save-outputs y.json", dir_),
      "--save-inputs 'x.npz': 2 samples do not fit one .npz file; give a .json path");
  expect_usage_error(
      run_cli("run log.onnx --load-inputs in.json --save-inputs x.json --save-outputs y.npz", dir_),
      "--save-outputs 'y.npz': 2 samples do not fit one .npz file");
  write("out.json", json::array({{{"y", testing::polygraphy_ndarray(row(1, 2, 3))}},
                                 {{"y", testing::polygraphy_ndarray(row(4, 5, 6))}}}));
  expect_usage_error(run_cli("run log.onnx --iterations 3 --load-outputs out.json", dir_),
                     "--iterations 3 generates 3 input samples but 'out.json' holds 2");
  for (const char* f : {"x.npz", "x.json", "y.json", "y.npz", "onnxdbg-repro"})
    EXPECT_FALSE(fs::exists(dir_ / f)) << f;
}

}  // namespace
}  // namespace onnxdbg
