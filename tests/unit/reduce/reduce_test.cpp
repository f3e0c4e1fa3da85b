// Tests of onnxdbg reduce: ddmin's 1-minimality, candidates fed with golden values, the --check
// oracle on real subprocesses (timeouts, missing commands, flaky checks), the built-in oracles on
// the reference and OpenCV, the cache and journal, artifacts and min-good.
#include "reduce/reduce.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "comparator/input_gen.h"
#include "core/subprocess.h"  // last_line
#include "model/model.h"
#include "reduce/ddmin.h"
#include "reduce/strategies/strategies.h"
#include "test_util.h"

namespace onnxdbg::reduce {
namespace {

namespace fs = std::filesystem;
using onnxdbg::testing::parse_text_model;

Original prepared(const onnx::ModelProto& model, int samples = 1) {
  Original o;
  o.model = model;
  for (int i = 0; i < samples; ++i) {
    InputGenOptions gen;
    gen.seed = 1 + static_cast<uint64_t>(i);
    gen.default_range = {-1.0, 1.0};
    auto in = generate_inputs(model.graph(), gen);
    EXPECT_TRUE(in.has_value()) << in.status().to_string();
    o.samples.push_back(*in);
  }
  EXPECT_TRUE(prepare_original(o));
  return o;
}

std::vector<std::string> kept_ops(const ReduceReport& r) { return r.kept_op_types; }

// Reduces `o` with every strategy of --mode full, writing the result to `output`.
Expected<ReduceReport> reduce_fully(const Original& o, Oracle& oracle, const fs::path& output) {
  ReduceOptions ro;
  ro.strategies = *strategies_for_mode("full");
  ro.reducer.output = output;
  return reduce_model(o, oracle, ro);
}

// Two branches from x; the failure needs the Sin on one and the Erf on the other.
const char* kTwoBranches = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y) {
  a1 = Relu(x)
  a2 = Sin(a1)
  a3 = Abs(a2)
  b1 = Neg(x)
  b2 = Erf(b1)
  b3 = Exp(b2)
  c = Add(a3, b3)
  d = Tanh(c)
  y = Sigmoid(d)
}
)ONNX";

TEST(Ddmin, FindsTheOneMinimalSubsetOfPlainItems) {
  std::vector<int> items;
  for (int i = 0; i < 40; ++i) items.push_back(i);
  int calls = 0;
  BatchTest<int> test = [&](const std::vector<std::vector<int>>& subsets) -> Expected<int> {
    for (size_t k = 0; k < subsets.size(); ++k) {
      ++calls;
      const auto& s = subsets[k];
      if (std::count(s.begin(), s.end(), 3) && std::count(s.begin(), s.end(), 37))
        return static_cast<int>(k);
    }
    return -1;
  };
  auto r = ddmin<int>(items, test);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (std::vector<int>{3, 37}));
  EXPECT_LT(calls, 80);
}

TEST(Candidate, RemovedNodesBecomeInputsFedWithGoldenValues) {
  Original o = prepared(parse_text_model(kTwoBranches));
  ASSERT_EQ(o.golden.size(), 1u);
  Candidate c;
  c.nodes = {4};  // b2 = Erf(b1) alone
  auto b = build_candidate(o, c);
  ASSERT_TRUE(b) << b.status().to_string();
  EXPECT_EQ(b->inputs, std::vector<std::string>{"b1"});
  EXPECT_EQ(b->outputs, std::vector<std::string>{"b2"});
  ASSERT_EQ(b->feeds.size(), 1u);
  // The fed value is what Neg(x) computed inside the full model.
  const Tensor& fed = b->feeds[0].at("b1");
  const Tensor& x = o.samples[0].at("x");
  for (int64_t i = 0; i < x.numel(); ++i)
    EXPECT_FLOAT_EQ(static_cast<float>(fed.get_as_double(i)),
                    -static_cast<float>(x.get_as_double(i)));
  EXPECT_TRUE(verify_candidate(o, *b));
  // The input is typed with its concrete shape.
  const auto& t = b->model.graph().input(0).type().tensor_type();
  ASSERT_EQ(t.shape().dim_size(), 2);
  EXPECT_EQ(t.shape().dim(0).dim_value(), 2);
  // Running the candidate on the reference gives the golden value of b2.
  auto out = onnxdbg::testing::run_reference(b->model, b->feeds[0]);
  ASSERT_TRUE(out.count("b2"));
  EXPECT_EQ(compare_tensors(out.at("b2"), o.golden[0].at("b2"), {0, 0}).mismatches, 0);
}

TEST(Candidate, DroppedOutputsTakeTheirBranchAlong) {
  Original o = prepared(parse_text_model(kTwoBranches));
  Candidate c;
  c.nodes = {0, 1, 2, 3, 4, 5};  // both branches, without the join: outputs a3 and b3
  auto b = build_candidate(o, c);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->outputs, (std::vector<std::string>{"a3", "b3"}));
  c.dropped_outputs = {"b3"};
  b = build_candidate(o, c);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->nodes, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(b->inputs, std::vector<std::string>{"x"});
  c.nodes.clear();
  EXPECT_FALSE(build_candidate(o, c));
}

// The check is a real subprocess: it "fails" (exit 1) when the candidate holds both op types.
std::vector<std::string> both_ops_check(const std::string& a, const std::string& b) {
  return {"sh", "-c",
          "! (grep -qa '" + a + "' \"$ONNXDBG_ITER_ARTIFACT\" && grep -qa '" + b +
              "' \"$ONNXDBG_ITER_ARTIFACT\")"};
}

TEST(Reduce, TwoNodesOnDifferentBranchesReduceToAOneMinimalModel) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  CheckOptions co;
  co.command = both_ops_check("Sin", "Erf");
  co.iter_artifact = (tmp.path() / "onnxdbg_debug.onnx").string();
  co.iter_inputs = (tmp.path() / "inputs.npz").string();
  co.work_dir = tmp.path();
  auto oracle = make_check_oracle(co);
  ASSERT_TRUE(oracle);
  auto rep = reduce_fully(o, **oracle, tmp.path() / "reduced.onnx");
  ASSERT_TRUE(rep) << rep.status().to_string();
  EXPECT_TRUE(rep->original_fails);
  EXPECT_EQ(kept_ops(*rep), (std::vector<std::string>{"Sin", "Erf"}));
  EXPECT_FALSE(rep->flaky);
  // 1-minimal: removing either node makes the check pass.
  auto written = load_model(tmp.path() / "reduced.onnx");
  ASSERT_TRUE(written);
  EXPECT_EQ(written->proto.graph().node_size(), 2);
  for (int drop = 0; drop < 2; ++drop) {
    onnx::ModelProto m = written->proto;
    m.mutable_graph()->mutable_node()->DeleteSubrange(drop, 1);
    BuiltCandidate b;
    b.model = m;
    m.SerializeToString(&b.bytes);
    auto v = (*oracle)->test(b, 0);
    ASSERT_TRUE(v);
    EXPECT_FALSE(v->fails) << "removing node " << drop << " still fails";
  }
}

TEST(Reduce, ParallelChecksGiveTheSameResultAsOne) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  std::vector<std::string> results;
  for (int jobs : {1, 3}) {
    CheckOptions co;
    co.command = both_ops_check("Sin", "Erf");
    co.iter_artifact = (tmp.path() / "a.onnx").string();
    co.iter_inputs = (tmp.path() / "inputs.npz").string();
    co.jobs = jobs;
    co.work_dir = tmp.path();
    auto oracle = make_check_oracle(co);
    ASSERT_TRUE(oracle);
    ReduceOptions ro;
    ro.strategies = {"nodes"};
    ro.reducer.output = tmp.path() / ("r" + std::to_string(jobs) + ".onnx");
    auto rep = reduce_model(o, **oracle, ro);
    ASSERT_TRUE(rep) << rep.status().to_string();
    std::string s;
    for (const auto& n : rep->kept_op_types) s += n + ",";
    results.push_back(s);
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(Reduce, BisectAndLinearKeepAWindowOfTheTopologicalOrder) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  for (const char* mode : {"bisect", "linear"}) {
    CheckOptions co;
    co.command = both_ops_check("Sin", "Erf");
    co.iter_artifact = (tmp.path() / "a.onnx").string();
    co.iter_inputs = (tmp.path() / "inputs.npz").string();
    co.work_dir = tmp.path();
    auto oracle = make_check_oracle(co);
    ReduceOptions ro;
    ro.strategies = *strategies_for_mode(mode);
    ro.reducer.output = tmp.path() / "r.onnx";
    auto rep = reduce_model(o, **oracle, ro);
    ASSERT_TRUE(rep) << rep.status().to_string();
    // Sin is node 1 and Erf node 4: the window 1..4 is the smallest contiguous one.
    EXPECT_EQ(rep->kept_op_types, (std::vector<std::string>{"Sin", "Abs", "Neg", "Erf"})) << mode;
  }
}

// Reduces `o` with the nodes strategy under the check command `command`, its candidates written
// to dir/a.onnx and the result to dir/r.onnx.
Expected<ReduceReport> reduce_nodes_with_check(const Original& o, std::vector<std::string> command,
                                               const fs::path& dir) {
  CheckOptions co;
  co.command = std::move(command);
  co.iter_artifact = (dir / "a.onnx").string();
  co.iter_inputs = (dir / "inputs.npz").string();
  ODB_ASSIGN_OR_RETURN(auto oracle, make_check_oracle(co));
  ReduceOptions ro;
  ro.strategies = {"nodes"};
  ro.reducer.output = dir / "r.onnx";
  return reduce_model(o, *oracle, ro);
}

TEST(Reduce, AnOriginalThatPassesIsReportedAndNothingIsReduced) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  auto rep = reduce_nodes_with_check(o, both_ops_check("Cos", "Erf"), tmp.path());
  ASSERT_TRUE(rep);
  EXPECT_FALSE(rep->original_fails);
  EXPECT_EQ(rep->oracle_calls, 1);
  EXPECT_FALSE(fs::exists(tmp.path() / "r.onnx"));
}

TEST(Reduce, AMissingCheckCommandIsAClearError) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  auto rep = reduce_nodes_with_check(o, {"no-such-command-onnxdbg", "x"}, tmp.path());
  ASSERT_FALSE(rep);
  EXPECT_EQ(rep.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(rep.status().message().find("no-such-command-onnxdbg"), std::string::npos);
}

TEST(Reduce, ACheckThatFailsOnEveryCandidateIsCalledOut) {
  // The classic broken check: the interpreter lacks a module, so every candidate "fails" and the
  // reduction ends on an arbitrary node. The verdict quotes the check's last stderr line and the
  // report says no candidate ever passed.
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  auto rep = reduce_nodes_with_check(o,
                                     {"sh", "-c",
                                      "echo 'Traceback ...' >&2; echo \"ModuleNotFoundError: No "
                                      "module named 'onnx'\" >&2; exit 1"},
                                     tmp.path());
  ASSERT_TRUE(rep) << rep.status().to_string();
  EXPECT_EQ(rep->original_detail,
            "exit code 1; last line of its stderr: ModuleNotFoundError: No module named 'onnx'");
  bool noted = false;
  for (const auto& n : rep->notes)
    noted |= n.find("the oracle failed every one of the") != std::string::npos &&
             n.find("ModuleNotFoundError") != std::string::npos;
  EXPECT_TRUE(noted);
  // A check that passes some candidates gets no such note.
  auto rep2 = reduce_nodes_with_check(o, both_ops_check("Cos", "Erf"), tmp.path());
  ASSERT_TRUE(rep2);
  for (const auto& n : rep2->notes)
    EXPECT_EQ(n.find("the oracle failed every one"), std::string::npos) << n;
}

TEST(CheckOracle, LastLineIsTrimmedAndCut) {
  EXPECT_EQ(last_line("a\n  b c  \n\n"), "b c");
  EXPECT_EQ(last_line(" \n\t"), "");
  EXPECT_EQ(last_line("only"), "only");
  EXPECT_EQ(last_line(std::string(200, 'x'), 10), "xxxxxxxxxx...");
}

TEST(CheckOracle, TimeoutsCountAsTheUserSays) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  auto b = build_candidate(o, whole_model(o));
  ASSERT_TRUE(b);
  for (bool means_fail : {false, true}) {
    CheckOptions co;
    co.command = {"sleep", "5"};
    co.iter_artifact = (tmp.path() / "a.onnx").string();
    co.iter_inputs = (tmp.path() / "inputs.npz").string();
    co.timeout_seconds = 0.2;
    co.timeout_means_fail = means_fail;
    auto oracle = make_check_oracle(co);
    const auto t0 = std::chrono::steady_clock::now();
    auto v = (*oracle)->test(*b, 0);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(v);
    EXPECT_TRUE(v->timed_out);
    EXPECT_EQ(v->fails, means_fail);
    EXPECT_LT(s, 3.0);
  }
}

TEST(CheckOracle, FailCodeAndRegexFollowPolygraphysRules) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  auto b = build_candidate(o, whole_model(o));
  auto verdict = [&](CheckOptions co) {
    co.iter_artifact = (tmp.path() / "a.onnx").string();
    co.iter_inputs = (tmp.path() / "inputs.npz").string();
    auto oracle = make_check_oracle(co);
    EXPECT_TRUE(oracle) << oracle.status().to_string();
    auto v = (*oracle)->test(*b, 0);
    EXPECT_TRUE(v);
    return v->fails;
  };
  CheckOptions co;
  co.command = {"sh", "-c", "echo 'Op: Erf'; exit 3"};
  EXPECT_TRUE(verdict(co));
  co.fail_code = 2;
  EXPECT_FALSE(verdict(co));
  co.fail_code = 3;
  co.fail_regex = {"Op: Sin"};
  EXPECT_FALSE(verdict(co));
  co.fail_regex = {"Op: Sin", "Op: E.f"};
  EXPECT_TRUE(verdict(co));
  co.command = {"sh", "-c", "echo 'Op: Erf' >&2; exit 0"};
  co.fail_code.reset();
  EXPECT_FALSE(verdict(co));
  co.ignore_fail_code = true;
  EXPECT_TRUE(verdict(co));
  co.fail_regex = {"("};
  EXPECT_FALSE(make_check_oracle(co));
}

TEST(Reduce, AFlakyCheckIsReported) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  // Fails on its first 3 calls whatever the candidate, then passes: the final re-test of the
  // result passes although the cached verdict says it failed.
  const fs::path counter = tmp.path() / "count";
  auto rep = reduce_nodes_with_check(
      o,
      {"sh", "-c",
       "n=$(cat '" + counter.string() + "' 2>/dev/null || echo 0); echo $((n+1)) > '" +
           counter.string() + "'; [ $n -ge 3 ]"},
      tmp.path());
  ASSERT_TRUE(rep) << rep.status().to_string();
  EXPECT_TRUE(rep->flaky);
  bool noted = false;
  for (const auto& n : rep->notes) noted = noted || n.find("flaky") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Reduce, TheJournalLetsAResumedRunSkipTheOracle) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  CheckOptions co;
  co.command = both_ops_check("Sin", "Erf");
  co.iter_artifact = (tmp.path() / "a.onnx").string();
  co.iter_inputs = (tmp.path() / "inputs.npz").string();
  auto oracle = make_check_oracle(co);
  ReduceOptions ro;
  ro.strategies = *strategies_for_mode("full");
  ro.reducer.output = tmp.path() / "r.onnx";
  ro.reducer.journal = tmp.path() / "r.journal";
  ro.reducer.artifacts = tmp.path() / "artifacts";
  ro.min_good = tmp.path() / "good.onnx";
  auto first = reduce_model(o, **oracle, ro);
  ASSERT_TRUE(first) << first.status().to_string();
  EXPECT_GT(first->oracle_calls, 4);
  // Artifacts are sorted by verdict, and min-good is a passing model.
  EXPECT_TRUE(fs::exists(tmp.path() / "artifacts" / "bad" / "iter_1.onnx"));
  EXPECT_FALSE(fs::is_empty(tmp.path() / "artifacts" / "good"));
  ASSERT_FALSE(first->min_good.empty());
  auto good = load_model(first->min_good);
  ASSERT_TRUE(good);
  BuiltCandidate gb;
  good->proto.SerializeToString(&gb.bytes);
  gb.model = good->proto;
  EXPECT_FALSE((*oracle)->test(gb, 0)->fails);

  ro.reducer.resume = true;
  ro.reducer.artifacts.clear();
  // Lines of another shape are skipped, never thrown on (issue 17 item 7).
  std::ofstream(ro.reducer.journal, std::ios::app)
      << "{\"hash\": 5, \"fails\": true}\n{\"hash\": \"h\", \"fails\": \"yes\"}\n[1, 2]\n";
  auto second = reduce_model(o, **oracle, ro);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->kept_op_types, first->kept_op_types);
  EXPECT_EQ(second->oracle_calls, 2);  // the original and the confirmation only
  EXPECT_GT(second->cache_hits, 0);
}

// Real models of the benchmark's shapes, made by tools/make_reduce_models.cpp.
fs::path reduce_models_dir() {
  static const TempDir dir = testing::make_temp_dir("onnxdbg-reduce-models-");  // gone at exit
  static bool made = false;
  if (!made) {
    const std::string cmd =
        std::string(ONNXDBG_BINARY_DIR) + "/make-reduce-models " + dir.path().string();
    made = std::system(cmd.c_str()) == 0;
  }
  return dir.path();
}

// A journal's failures are judged again against the resumed run's original: written for another
// failure (every signature changed), they count as passes, so the search goes another way and asks
// the oracle again; with --any-failure they count as failures again and the journal answers
// everything, the first run's result again.
TEST(Reduce, AResumedRunJudgesTheJournalsFailuresByItsOwnSignature) {
  auto m = load_model(reduce_models_dir() / "chain300.onnx");
  ASSERT_TRUE(m);
  Original o = prepared(m->proto);
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  BuiltinOptions bo;
  bo.fail_on = {FailOn::kNan};
  bo.backends = {*BackendSpec::parse("reference")};
  bo.work_dir = tmp.path();
  auto oracle = make_builtin_oracle(bo);
  ASSERT_TRUE(oracle);
  ReduceOptions ro;
  ro.strategies = *strategies_for_mode("bisect");
  ro.reducer.output = tmp.path() / "r.onnx";
  ro.reducer.journal = tmp.path() / "r.journal";
  auto first = reduce_model(o, **oracle, ro);
  ASSERT_TRUE(first) << first.status().to_string();
  ASSERT_LT(first->nodes_after, first->nodes_before);
  ASSERT_FALSE(first->signature.empty());

  // The same verdicts, each failure now with another signature.
  std::ifstream in(ro.reducer.journal);
  std::string text, line;
  int failures = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j["fails"].get<bool>()) {
      j["signature"] = "opencv: load: another failure";
      ++failures;
    }
    text += j.dump() + "\n";
  }
  in.close();
  ASSERT_GT(failures, 1);
  std::ofstream(ro.reducer.journal) << text;
  ro.reducer.resume = true;
  ro.reducer.journal = tmp.path() / "r.journal";
  const std::string journal_text = text;
  auto other = reduce_model(o, **oracle, ro);
  ASSERT_TRUE(other) << other.status().to_string();
  EXPECT_GT(other->oracle_calls, 2);  // the journal's failures were not this run's
  EXPECT_GT(other->cache_hits, 0);    // its passes were

  std::ofstream(ro.reducer.journal) << journal_text;
  ro.reducer.any_failure = true;
  auto any = reduce_model(o, **oracle, ro);
  ASSERT_TRUE(any) << any.status().to_string();
  EXPECT_EQ(any->nodes_after, first->nodes_after);
  EXPECT_EQ(any->oracle_calls, 2);  // the original and the confirmation only
}

TEST(Reduce, BuiltInNanOracleFindsTheOneRareNodeInEachBenchmarkModel) {
  for (const char* name :
       {"resnet70.onnx", "transformer611.onnx", "dag1994.onnx", "chain300.onnx"}) {
    auto m = load_model(reduce_models_dir() / name);
    ASSERT_TRUE(m) << name;
    Original o = prepared(m->proto);
    ASSERT_TRUE(o.golden_error.empty()) << o.golden_error;
    const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
    BuiltinOptions bo;
    bo.fail_on = {FailOn::kNan};
    bo.backends = {*BackendSpec::parse("reference")};
    bo.work_dir = tmp.path();
    auto oracle = make_builtin_oracle(bo);
    ASSERT_TRUE(oracle);
    auto rep = reduce_fully(o, **oracle, tmp.path() / "r.onnx");
    ASSERT_TRUE(rep) << rep.status().to_string();
    EXPECT_TRUE(rep->original_fails) << name;
    EXPECT_EQ(rep->kept_op_types, std::vector<std::string>{"Log"}) << name;
  }
}

TEST(Reduce, BuiltInMismatchOracleFindsTheSoftmaxOpenCvGetsWrong) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  const std::string cmd =
      std::string(ONNXDBG_BINARY_DIR) + "/make-demo-model " + (tmp.path() / "demo.onnx").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto m = load_model(tmp.path() / "demo.onnx");
  ASSERT_TRUE(m);
  Original o = prepared(m->proto, /*samples=*/2);
  BuiltinOptions bo;
  bo.fail_on = {FailOn::kMismatch};
  bo.backends = {*BackendSpec::parse("reference"), *BackendSpec::parse("opencv")};
  bo.tolerance.default_tol = {1e-4, 1e-3};
  bo.work_dir = tmp.path();
  for (int jobs : {1, 2}) {
    SCOPED_TRACE("jobs " + std::to_string(jobs));
    bo.jobs = jobs;  // two OpenCV workers side by side, each on its own candidate file
    auto oracle = make_builtin_oracle(bo);
    ASSERT_TRUE(oracle) << oracle.status().to_string();
    EXPECT_EQ((*oracle)->max_parallel(), jobs);
    auto rep = reduce_fully(o, **oracle, tmp.path() / "r.onnx");
    ASSERT_TRUE(rep) << rep.status().to_string();
    ASSERT_TRUE(rep->original_fails) << rep->original_detail;
    EXPECT_EQ(rep->kept_op_types, std::vector<std::string>{"Softmax"});
  }
}

TEST(Reduce, Float16PrecisionIsHonouredByTheBuiltInOracle) {
  // x * 1000 * 1000 leaves float16's range (65504) for x in [1, 3]: on a backend with
  // precision=fp16 the candidate is converted as `run` converts the model, so the mismatch is
  // seen and reduced to the one node whose value overflows (the Mul, or the Div fed the frozen
  // overflowing value); a reference that ignored the option would see no mismatch at all.
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (float[1,3] y)
<float k = {1000.0}, float m = {1000000.0}>
{
  a = Relu(x)
  big = Mul(a, k)
  huge = Mul(big, k)
  z = Div(huge, m)
  y = Neg(z)
})"));
  for (const char* backend : {"reference:precision=fp16", "onnxruntime:precision=fp16"}) {
    SCOPED_TRACE(backend);
    BuiltinOptions bo;
    bo.fail_on = {FailOn::kMismatch};
    bo.backends = {*BackendSpec::parse("reference"), *BackendSpec::parse(backend)};
    bo.tolerance.default_tol = {1e-2, 1e-2};
    bo.work_dir = tmp.path();
    auto oracle = make_builtin_oracle(bo);
    ASSERT_TRUE(oracle) << oracle.status().to_string();
    auto rep = reduce_fully(o, **oracle, tmp.path() / "r.onnx");
    ASSERT_TRUE(rep) << rep.status().to_string();
    ASSERT_TRUE(rep->original_fails) << rep->original_detail;
    ASSERT_EQ(rep->kept_op_types.size(), 1u);
    EXPECT_TRUE(rep->kept_op_types[0] == "Mul" || rep->kept_op_types[0] == "Div")
        << rep->kept_op_types[0];
    // The signature names the first divergent node of the original, the one kept.
    EXPECT_NE(rep->signature.find("|first divergent " + rep->kept_op_types[0]), std::string::npos)
        << rep->signature;
  }
  BuiltinOptions bad;
  bad.fail_on = {FailOn::kMismatch};
  bad.backends = {*BackendSpec::parse("reference"),
                  *BackendSpec::parse("reference:precision=int8")};
  EXPECT_FALSE(make_builtin_oracle(bad));
}

TEST(Reduce, ACandidateThatCrashesTheBackendIsAVerdictNotACrash) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kTwoBranches));
  BuiltinOptions bo;
  bo.fail_on = {FailOn::kError};
  bo.backends = {*BackendSpec::parse("onnxruntime:debug_crash=run")};
  bo.fail_regex = {"SIGSEGV"};
  bo.work_dir = tmp.path();
  auto oracle = make_builtin_oracle(bo);
  ASSERT_TRUE(oracle) << oracle.status().to_string();
  ReduceOptions ro;
  ro.strategies = {"nodes"};
  ro.reducer.output = tmp.path() / "r.onnx";
  auto rep = reduce_model(o, **oracle, ro);
  ASSERT_TRUE(rep) << rep.status().to_string();
  EXPECT_TRUE(rep->original_fails);
  EXPECT_NE(rep->original_detail.find("SIGSEGV"), std::string::npos) << rep->original_detail;
  EXPECT_EQ(rep->nodes_after, 1);  // every candidate crashes: one node is enough
}

TEST(Reduce, LayerwiseValuesTheUserBringsAreTheGoldenValues) {
  Original o;
  o.model = parse_text_model(kTwoBranches);
  o.samples.push_back({{"x", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  o.provided.emplace("b1", Tensor::from_vector<float>({2, 3}, {7, 7, 7, 7, 7, 7}));
  ASSERT_TRUE(prepare_original(o));
  Candidate c;
  c.nodes = {4};  // Erf(b1)
  auto b = build_candidate(o, c);
  ASSERT_TRUE(b);
  EXPECT_FLOAT_EQ(static_cast<float>(b->feeds[0].at("b1").get_as_double(0)), 7.0f);
  // A value of another model is refused in one sentence.
  o.provided.emplace("nope", Tensor::from_vector<float>({1}, {0}));
  Status st = prepare_original(o);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("'nope' is not a tensor of the model"), std::string::npos);
}

// An oracle deciding on the candidate's model alone, as a --check script would (no signature).
class PredicateOracle : public Oracle {
 public:
  explicit PredicateOracle(std::function<bool(const onnx::ModelProto&)> fails)
      : fails_(std::move(fails)) {}
  std::string describe() const override { return "predicate"; }
  bool needs_values() const override { return false; }
  Expected<OracleVerdict> test(const BuiltCandidate& c, int) override {
    OracleVerdict v;
    v.fails = fails_(c.model);
    return v;
  }

 private:
  std::function<bool(const onnx::ModelProto&)> fails_;
};

std::function<bool(const onnx::ModelProto&)> has_op(const std::string& op) {
  return [op](const onnx::ModelProto& m) {
    for (const auto& n : m.graph().node())
      if (n.op_type() == op) return true;
    return false;
  };
}

// Every node of `m` has an output that a node reads or the graph outputs (no dead node).
bool no_dead_node(const onnx::ModelProto& m) {
  std::set<std::string> read;
  for (const auto& n : m.graph().node())
    for (const auto& i : n.input()) read.insert(i);
  for (const auto& o : m.graph().output()) read.insert(o.name());
  for (const auto& n : m.graph().node())
    if (std::none_of(n.output().begin(), n.output().end(),
                     [&](const std::string& o) { return read.count(o) > 0; }))
      return false;
  return true;
}

// Constants read only after the cut, and a side branch (s) read only after it too.
const char* kConstantsAndASideBranch = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y) {
  k1 = Constant <value = float[1] {2.0}> ()
  k2 = Constant <value = float[1] {3.0}> ()
  a = Relu(x)
  s = Cos(a)
  b = Mul(a, k1)
  c = Sin(b)
  d = Add(c, k2)
  e = Add(d, s)
  y = Tanh(e)
}
)ONNX";

TEST(Candidate, AConstantWhoseReadersWereRemovedIsNeitherAnOutputNorKept) {
  Original o = prepared(parse_text_model(kConstantsAndASideBranch));
  Candidate c;
  c.nodes = {0, 1, 2, 3, 4, 5};  // the prefix up to Sin: k2's only reader (d) is cut off
  auto b = build_candidate(o, c);
  ASSERT_TRUE(b) << b.status().to_string();
  // Before issue 18, k2 was a graph output and its Constant was kept.
  EXPECT_EQ(b->outputs, (std::vector<std::string>{"s", "c"}));
  EXPECT_EQ(b->nodes, (std::vector<int>{0, 2, 3, 4, 5}));
  EXPECT_TRUE(no_dead_node(b->model));
  // A candidate of constants alone has nothing to output.
  c.nodes = {0, 1};
  EXPECT_FALSE(build_candidate(o, c));
}

TEST(Reduce, BisectAndLinearEndWithOneOutputAndNoDeadNode) {
  // The det model's ConvTranspose case in miniature: with --no-reduce-inputs no new graph input
  // is made, so the result is the prefix cone of the Sin with one output (Polygraphy's bisect
  // marks one), not the prefix with every constant and side value as extra outputs.
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kConstantsAndASideBranch));
  o.keep_inputs = true;
  for (const char* mode : {"bisect", "linear"}) {
    SCOPED_TRACE(mode);
    PredicateOracle oracle(has_op("Sin"));
    ReduceOptions ro;
    ro.strategies = *strategies_for_mode(mode);
    ro.reducer.output = tmp.path() / "r.onnx";
    auto rep = reduce_model(o, oracle, ro);
    ASSERT_TRUE(rep) << rep.status().to_string();
    EXPECT_EQ(rep->kept_op_types, (std::vector<std::string>{"Relu", "Mul", "Sin"}));
    EXPECT_EQ(rep->outputs, std::vector<std::string>{"c"});
    EXPECT_EQ(rep->inputs, std::vector<std::string>{"x"});
    auto written = load_model(tmp.path() / "r.onnx");
    ASSERT_TRUE(written);
    EXPECT_EQ(written->proto.graph().output_size(), 1);
    // The input-side search removed the Constant: its value, read by the Mul, is an initializer
    // (a constant never becomes a graph input).
    ASSERT_EQ(written->proto.graph().initializer_size(), 1);
    EXPECT_EQ(written->proto.graph().initializer(0).name(), "k1");
    EXPECT_TRUE(no_dead_node(written->proto));
    // Suffixes that would make new inputs were dropped before the oracle, and counted.
    EXPECT_GT(rep->invalid_reasons["--no-reduce-inputs"], 0);
  }
  o.keep_inputs = false;  // the input side may be cut too: the Sin alone, fed b
  PredicateOracle oracle(has_op("Sin"));
  ReduceOptions ro;
  ro.strategies = *strategies_for_mode("bisect");
  ro.reducer.output = tmp.path() / "r.onnx";
  auto rep = reduce_model(o, oracle, ro);
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->kept_op_types, std::vector<std::string>{"Sin"});
  EXPECT_EQ(rep->outputs, std::vector<std::string>{"c"});
}

TEST(Reduce, NoReduceInputsAndOutputsAreHonouredOnAModelWithConstants) {
  // The Mul reads two Constants only: without the switches' checks a model of the three
  // constant nodes alone, with no graph input, was a valid candidate.
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y, float[2,3] z) {
  k1 = Constant <value = float[1] {2.0}> ()
  k2 = Constant <value = float[1] {3.0}> ()
  m = Mul(k1, k2)
  a = Relu(x)
  y = Add(a, m)
  z = Neg(a)
}
)ONNX"));
  for (const char* mode : {"full", "bisect", "linear"}) {
    SCOPED_TRACE(mode);
    o.keep_inputs = true;
    o.keep_outputs = false;
    PredicateOracle oracle(has_op("Mul"));
    ReduceOptions ro;
    ro.strategies = *strategies_for_mode(mode);
    ro.reducer.output = tmp.path() / "r.onnx";
    auto rep = reduce_model(o, oracle, ro);
    ASSERT_TRUE(rep) << rep.status().to_string();
    EXPECT_EQ(rep->inputs, std::vector<std::string>{"x"});
    EXPECT_EQ(rep->outputs, std::vector<std::string>{"y"});
    // --no-reduce-outputs: the model's outputs stay, all of them.
    o.keep_inputs = false;
    o.keep_outputs = true;
    rep = reduce_model(o, oracle, ro);
    ASSERT_TRUE(rep) << rep.status().to_string();
    EXPECT_EQ(rep->outputs, (std::vector<std::string>{"y", "z"}));
  }
}

TEST(Reducer, SignaturesMaskNumbersAndTheModelsNames) {
  const std::vector<std::string> names = {"p2o.Clip.12", "conv_out"};
  EXPECT_EQ(mask_signature("error|opencv|load|Node [Clip]:(onnx_node!p2o.Clip.12) is 3", names),
            "error|opencv|load|Node [Clip]:(onnx_node!<name>) is N");
  EXPECT_EQ(mask_signature("error|opencv|load|Node [Clip]:(onnx_node!p2o.Clip.0) is 3", names),
            "error|opencv|load|Node [Clip]:(onnx_node!pNo.Clip.N) is N");
  // A name inside a longer word is left alone.
  EXPECT_EQ(mask_signature("conv_outer 'conv_out'", names), "conv_outer '<name>'");
}

TEST(Reducer, AMismatchOracleRejectsADisagreementThatStartsElsewhere) {
  // On a float16 reference, x * 1000 * 1000 overflows in the second Mul (the original's first
  // divergent node). The Relu alone, fed that Mul's float32 golden value, disagrees too, but
  // only because the value overflows when converted to float16 on the way in: not the
  // original's failure.
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (float[1,3] y)
<float k = {1000.0}>
{
  big = Mul(x, k)
  huge = Mul(big, k)
  y = Relu(huge)
})"));
  BuiltinOptions bo;
  bo.fail_on = {FailOn::kMismatch};
  bo.backends = {*BackendSpec::parse("reference"), *BackendSpec::parse("reference:precision=fp16")};
  bo.tolerance.default_tol = {1e-2, 1e-2};
  bo.work_dir = tmp.path();
  Candidate relu_alone;
  relu_alone.nodes = {2};
  for (bool any_failure : {false, true}) {
    SCOPED_TRACE(any_failure ? "--any-failure" : "signature");
    auto oracle = make_builtin_oracle(bo);
    ASSERT_TRUE(oracle) << oracle.status().to_string();
    ReducerOptions ro;
    ro.output = tmp.path() / "r.onnx";
    ro.any_failure = any_failure;
    Reducer r(o, **oracle, ro);
    auto first = r.start();
    ASSERT_TRUE(first) << first.status().to_string();
    ASSERT_TRUE(first->fails) << first->detail;
    auto idx = r.try_batch({relu_alone});
    ASSERT_TRUE(idx) << idx.status().to_string();
    if (any_failure) {
      EXPECT_EQ(*idx, 0);  // any disagreement is accepted
      continue;
    }
    EXPECT_EQ(r.signature(),
              "mismatch|reference:precision=fpN vs reference|values|first divergent Mul");
    EXPECT_EQ(*idx, -1);
    EXPECT_EQ(r.failed_differently(), 1);
  }
}

// OpenCV 4.6 refuses a Clip with three inputs when it loads the model, and a model of one
// Constant (an output of the original) when it runs it: two failures of different kinds.
const char* kClipAndAConstantOutput = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (float[2] k, float[1,4] y) <float lo = {0.0}, float hi = {6.0}> {
  k = Constant <value = float[2] {1.0, 2.0}> ()
  y = Clip(x, lo, hi)
}
)ONNX";

TEST(Reduce, TheErrorOracleRejectsACandidateThatFailsDifferently) {
  const TempDir tmp = testing::make_temp_dir("onnxdbg-reduce-test-");
  Original o = prepared(parse_text_model(kClipAndAConstantOutput));
  ASSERT_TRUE(o.golden_error.empty()) << o.golden_error;
  BuiltinOptions bo;
  bo.fail_on = {FailOn::kError};
  bo.backends = {*BackendSpec::parse("reference"), *BackendSpec::parse("opencv")};
  bo.work_dir = tmp.path();
  for (bool any_failure : {false, true}) {
    SCOPED_TRACE(any_failure ? "--any-failure" : "signature");
    auto oracle = make_builtin_oracle(bo);
    ASSERT_TRUE(oracle) << oracle.status().to_string();
    ReduceOptions ro;
    ro.strategies = {"nodes"};
    ro.reducer.output = tmp.path() / "r.onnx";
    ro.reducer.journal = tmp.path() / "r.journal";
    ro.reducer.any_failure = any_failure;
    auto rep = reduce_model(o, **oracle, ro);
    ASSERT_TRUE(rep) << rep.status().to_string();
    ASSERT_TRUE(rep->original_fails) << rep->original_detail;
    EXPECT_NE(rep->signature.find("error|opencv|load|"), std::string::npos) << rep->signature;
    if (any_failure) {
      // Today's behaviour: the lone Constant "fails" (OpenCV cannot run it) and is accepted.
      EXPECT_EQ(rep->kept_op_types, std::vector<std::string>{"Constant"});
      EXPECT_EQ(rep->failed_differently, 0);
      continue;
    }
    EXPECT_EQ(rep->kept_op_types, std::vector<std::string>{"Clip"});
    EXPECT_EQ(rep->outputs, std::vector<std::string>{"y"});
    EXPECT_EQ(rep->failed_differently, 1);
    std::ifstream journal(tmp.path() / "r.journal");
    std::string text((std::istreambuf_iterator<char>(journal)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"failed_differently\":true"), std::string::npos) << text;
    EXPECT_NE(text.find("fails differently from the original"), std::string::npos) << text;
    bool noted = false;
    for (const auto& n : rep->notes) noted |= n.find("--any-failure") != std::string::npos;
    EXPECT_TRUE(noted);
  }
}

TEST(Ddmin, NarrowFindsOneBadItemInAboutLogRounds) {
  for (size_t width : {1u, 2u, 3u}) {
    std::vector<int> items;
    for (int i = 0; i < 1000; ++i) items.push_back(i);
    int rounds = 0;
    BatchTest<int> test = [&](const std::vector<std::vector<int>>& subsets) -> Expected<int> {
      ++rounds;
      for (size_t k = 0; k < subsets.size(); ++k)
        if (std::count(subsets[k].begin(), subsets[k].end(), 613)) return static_cast<int>(k);
      return -1;
    };
    auto r = narrow<int>(items, test, width);
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, std::vector<int>{613}) << width;
    EXPECT_LE(rounds, static_cast<int>(std::ceil(std::log(1000.0) / std::log(width + 1.0))) + 1)
        << width;
  }
}

}  // namespace
}  // namespace onnxdbg::reduce
