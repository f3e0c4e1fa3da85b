// Layerwise localization on real backends: the demo model's Softmax on OpenCV is named as the
// first divergent node by its own error; float16 overflow shows where Inf first appears; batching
// under a small budget gives the same answers; a budget too small for one tensor is an error.
#include "layerwise/layerwise.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "comparator/input_gen.h"
#include "data/test_data.h"
#include "layerwise/layer_values.h"
#include "model/model.h"
#include "surgeon/taken_branches.h"
#include "test_util.h"

namespace onnxdbg {
namespace {

namespace fs = std::filesystem;

// The model of tools/make_demo_model.cpp: OpenCV 4.6 applies Softmax's pre-13 default axis.
const char* const kDemo = testing::demo_model_text();

// float16 all the way: x in [0.7, 1] times 1000 times 100 exceeds 65504, so 'b' is +Inf.
const char* kFp16 = R"(
<ir_version: 8, opset_import: ["" : 13]>
fp16_overflow (float16[2,4] x) => (float16[2,4] y)
<float[1] k1 = {1000.0}, float[1] k2 = {100.0}>
{
  h1 = Cast<to = 10>(k1)
  h2 = Cast<to = 10>(k2)
  a = Mul(x, h1)
  b = Mul(a, h2)
  y = Relu(b)
}
)";

// float32 throughout; run in float16 (precision=fp16), x in [0.7, 1] times 1000 is within
// float16's range but times 100 more is not: 'b' overflows, Relu only passes the +Inf on.
const char* kFp32Overflow = R"(
<ir_version: 8, opset_import: ["" : 13]>
fp32_overflow (float[2,4] x) => (float[2,4] y)
<float[1] k1 = {1000.0}, float[1] k2 = {100.0}>
{
  a = Mul(x, k1)
  b = Mul(a, k2)
  y = Relu(b)
}
)";

class Layerwise : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("onnxdbg_layerwise_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  LoadedModel write(const std::string& text, const std::string& name) {
    const fs::path p = dir_ / name;
    EXPECT_TRUE(save_model(testing::parse_text_model(text), p).is_ok());
    auto m = load_model(p);
    EXPECT_TRUE(m.has_value());
    return std::move(*m);
  }
  TensorMap inputs(const LoadedModel& m, double low = 0, double high = 1) {
    InputGenOptions gen;
    gen.default_range = {low, high};
    auto in = generate_inputs(m.proto.graph(), gen);
    EXPECT_TRUE(in.has_value());
    return std::move(*in);
  }
  const LayerComparison* find(const LayerwiseReport& r, const std::string& backend,
                              const std::string& tensor) {
    for (const auto& c : r.comparisons)
      if (c.backend == backend && r.tensors[c.tensor].name == tensor) return &c;
    return nullptr;
  }
  fs::path dir_;
};

TEST_F(Layerwise, DemoSoftmaxIsTheFirstDivergentNodeOnOpenCV) {
  LoadedModel m = write(kDemo, "demo.onnx");
  const TensorMap in = inputs(m);
  LayerwiseOptions opt;
  opt.isolate = true;
  auto r = run_layerwise(m, {{"opencv", {}}, {"onnxruntime", {}}}, in, opt);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  // Constant outputs are data, not computation: proj, act, probs, scaled.
  ASSERT_EQ(r->tensors.size(), 4u);
  ASSERT_TRUE(r->first.has_value());
  const LayerTensor& t = r->tensors[r->first->tensor];
  EXPECT_EQ(t.op_type, "Softmax");
  EXPECT_EQ(t.name, "probs");
  EXPECT_EQ(r->first->backend, "opencv");
  EXPECT_EQ(r->first->basis, "own");
  ASSERT_TRUE(r->first->own_error.has_value());
  EXPECT_GT(*r->first->own_error, 0.1);
  // Upstream tensors agree on OpenCV (observed by layer name), everything agrees on ORT.
  for (const char* name : {"proj", "act", "scaled"}) {
    const auto* c = find(*r, "opencv", name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->observed) << name << ": " << c->note;
    EXPECT_TRUE(c->result.pass) << name;
  }
  EXPECT_EQ(r->backends[1].failed, 0);
  EXPECT_EQ(r->backends[1].observed, 4);

  // The repro folder holds the Softmax alone and reproduces with golden values.
  const fs::path repro = dir_ / "repro";
  ASSERT_TRUE(save_layerwise_repro(m, in, *r, repro).is_ok());
  auto rm = load_model(repro / "model.onnx");
  ASSERT_TRUE(rm.has_value());
  ASSERT_EQ(rm->proto.graph().node_size(), 1);
  EXPECT_EQ(rm->proto.graph().node(0).op_type(), "Softmax");
  auto rin = load_test_data_inputs(repro / "test_data_set_0", rm->proto.graph());
  auto rout = load_test_data_outputs(repro / "test_data_set_0", rm->proto.graph());
  ASSERT_TRUE(rin.has_value() && rout.has_value());
  auto got = testing::run_reference(rm->proto, *rin);
  EXPECT_TRUE(compare_tensors(got.at("probs"), rout->at("probs"), {}).pass);
  // A folder that is not an earlier repro is never replaced.
  fs::create_directories(dir_ / "mine");
  EXPECT_FALSE(save_layerwise_repro(m, in, *r, dir_ / "mine").is_ok());
}

// A model listing its nodes backwards (as some published models list many of theirs): the pass
// runs them in a topological order, reports the tensors in that order and numbers nodes by it,
// and the repro still holds the right node.
TEST_F(Layerwise, NodesListedBeforeTheirInputsAreComparedInRunOrder) {
  onnx::ModelProto proto = testing::parse_text_model(kDemo);
  auto* nodes = proto.mutable_graph()->mutable_node();
  std::reverse(nodes->begin(), nodes->end());
  ASSERT_TRUE(save_model(proto, dir_ / "backwards.onnx").is_ok());
  auto loaded = load_model(dir_ / "backwards.onnx");
  ASSERT_TRUE(loaded.has_value());
  const LoadedModel& m = *loaded;
  const TensorMap in = inputs(m);
  LayerwiseOptions opt;
  opt.isolate = true;
  opt.memory_budget = 256;  // a batch per tensor: prefixes of the run order
  auto r = run_layerwise(m, {{"opencv", {}}, {"onnxruntime", {}}}, in, opt);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_EQ(r->tensors.size(), 4u);
  std::vector<std::string> names;
  for (size_t i = 0; i < r->tensors.size(); ++i) {
    names.push_back(r->tensors[i].name);
    if (i) {
      EXPECT_GT(r->tensors[i].node_index, r->tensors[i - 1].node_index);
    }
  }
  // Stable Kahn: the lowest file index among the ready nodes first (Mul is #0 in the file).
  EXPECT_EQ(names, (std::vector<std::string>{"proj", "act", "scaled", "probs"}));
  EXPECT_EQ(r->backends[1].failed, 0) << r->backends[1].error;
  EXPECT_EQ(r->backends[1].observed, 4);
  ASSERT_TRUE(r->first.has_value());
  EXPECT_EQ(r->tensors[r->first->tensor].name, "probs");
  EXPECT_EQ(r->first->basis, "own");
  const fs::path repro = dir_ / "repro";
  ASSERT_TRUE(save_layerwise_repro(m, in, *r, repro).is_ok());
  auto rm = load_model(repro / "model.onnx");
  ASSERT_TRUE(rm.has_value());
  ASSERT_EQ(rm->proto.graph().node_size(), 1);
  EXPECT_EQ(rm->proto.graph().node(0).op_type(), "Softmax");
}

// Issue 18: the overflowing Mul of kFp32Overflow two If levels down, the conditions computed from
// x (sum(x) > 0, sum(x) < 1000). Unnamed nodes, so the paths use "If#<index>" and "Mul#<index>".
const char* kLayerwiseNestedIf = R"(
<ir_version: 8, opset_import: ["" : 13]>
nested_if (float[2,4] x) => (float[2,4] y)
<float[1] k1 = {1000.0}, float[1] k2 = {100.0}, float zero = {0.0}, float big = {1000.0}>
{
  s = ReduceSum<keepdims = 0>(x)
  c1 = Greater(s, zero)
  c2 = Less(s, big)
  y = If(c1) <
    then_branch = outer_then () => (float[2,4] t) {
      t = If(c2) <
        then_branch = inner_then () => (float[2,4] u) {
          a = Mul(x, k1)
          b = Mul(a, k2)
          u = Relu(b)
        },
        else_branch = inner_else () => (float[2,4] v) {
          v = Identity(x)
        }
      >
    },
    else_branch = outer_else () => (float[2,4] e) {
      e = Neg(x)
    }
  >
})";

// The nodes inside the branches that ran are compared like main-graph nodes: the first divergent
// node is the Mul two levels down, named by its path, isolated alone (its outer-scope inputs
// become inputs), and written as a repro.
TEST_F(Layerwise, ANodeInsideNestedIfBranchesIsTheFirstDivergentNode) {
  LoadedModel m = write(kLayerwiseNestedIf, "nested_if.onnx");
  const TensorMap in = inputs(m, 0.7, 1.0);
  LayerwiseOptions opt;
  opt.isolate = true;
  opt.tolerance.default_tol = {1e-2, 1e-2};
  auto r = run_layerwise(m, {{"onnxruntime", {}}, {"reference", {{"precision", "fp16"}}}}, in, opt);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_EQ(r->taken_branches.size(), 2u);
  EXPECT_EQ(r->taken_branches[0].node, "If#3");
  EXPECT_TRUE(r->taken_branches[0].then_branch);
  EXPECT_EQ(r->taken_branches[1].node, "If#3/then_branch/If#0");
  EXPECT_TRUE(r->taken_branches[1].then_branch);
  EXPECT_EQ(r->taken_branches[1].depth, 1);
  EXPECT_TRUE(r->control_flow_notes.empty());
  std::vector<std::string> names;
  for (const auto& t : r->tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"s", "c1", "c2", "a", "b", "y"}));
  for (const auto& b : r->backends) EXPECT_TRUE(b.ok) << b.backend << ": " << b.error;
  EXPECT_EQ(r->backends[0].observed, 6);  // ONNX Runtime gives the tensors inside the branches
  EXPECT_EQ(r->backends[0].failed, 0);
  ASSERT_TRUE(r->first.has_value());
  const LayerTensor& t = r->tensors[r->first->tensor];
  EXPECT_EQ(t.name, "b");
  EXPECT_EQ(t.node, "If#3/then_branch/If#0/then_branch/Mul#1");
  EXPECT_EQ(r->first->backend, "reference:precision=fp16");
  EXPECT_EQ(r->first->basis, "own");

  const fs::path repro = dir_ / "repro";
  ASSERT_TRUE(save_layerwise_repro(m, in, *r, repro).is_ok());
  auto rm = load_model(repro / "model.onnx");
  ASSERT_TRUE(rm.has_value());
  std::vector<std::string> ops;
  for (const auto& n : rm->proto.graph().node()) ops.push_back(n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Cast", "Mul", "Cast"}));

  // Inputs that take the other branch: the else branch's Neg is compared, nothing diverges.
  const TensorMap negative = inputs(m, -1.0, -0.7);
  auto other = run_layerwise(m, {{"onnxruntime", {}}}, negative, opt);
  ASSERT_TRUE(other.has_value()) << other.status().to_string();
  ASSERT_EQ(other->taken_branches.size(), 1u);
  EXPECT_FALSE(other->taken_branches[0].then_branch);
  ASSERT_EQ(other->tensors.size(), 4u);
  EXPECT_EQ(other->tensors[3].node, "If#3/else_branch/Neg#0");
  EXPECT_FALSE(other->first.has_value());
}

// A Loop is compared iteration by iteration: x in [0.7, 1] times 100 per iteration passes
// float16's 65504 in iteration 2, whose Mul is the first divergent node, named with its iteration.
TEST_F(Layerwise, ALoopIsComparedIterationByIteration) {
  onnx::ModelProto proto = testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
grow (float[2,4] x) => (float[2,4] y)
<int64 m = {4}, float hundred = {100.0}>
{
  cond = Constant<value = bool {1}>()
  y = Loop(m, cond, x) <
    body = body_g (int64 i, bool c_in, float[2,4] v) => (bool c_out, float[2,4] v_out) {
      c_out = Identity(c_in)
      v_out = Mul(v, hundred)
    }
  >
})");
  proto.mutable_graph()->mutable_node(1)->set_name("grow");
  ASSERT_TRUE(save_model(proto, dir_ / "loop.onnx").is_ok());
  auto m = load_model(dir_ / "loop.onnx");
  ASSERT_TRUE(m.has_value());
  const TensorMap in = inputs(*m, 0.7, 1.0);
  LayerwiseOptions opt;
  opt.isolate = true;
  opt.tolerance.default_tol = {1e-2, 1e-2};
  auto r =
      run_layerwise(*m, {{"onnxruntime", {}}, {"reference", {{"precision", "fp16"}}}}, in, opt);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_EQ(r->taken_branches.size(), 1u);
  EXPECT_EQ(r->taken_branches[0].op_type, "Loop");
  EXPECT_EQ(r->taken_branches[0].iterations, 4);
  EXPECT_EQ(r->backends[0].failed, 0);
  EXPECT_GE(r->backends[0].observed, 8);  // four Muls and four conditions at least
  ASSERT_TRUE(r->first.has_value());
  EXPECT_EQ(r->tensors[r->first->tensor].node, "grow/body/Mul#1 [iter 2]");
  EXPECT_EQ(r->first->basis, "own");
}

// Golden values loaded by tensor name reach inside the branches too: a perturbed value of 'b'
// makes its Mul, inside the nested branches, the first divergent node on ONNX Runtime.
TEST_F(Layerwise, LoadedGoldenValuesInsideABranchAreCompared) {
  onnx::ModelProto proto = testing::parse_text_model(kLayerwiseNestedIf);
  proto.mutable_graph()->mutable_node(3)->set_name("outer");
  ASSERT_TRUE(save_model(proto, dir_ / "named.onnx").is_ok());
  auto m = load_model(dir_ / "named.onnx");
  ASSERT_TRUE(m.has_value());
  const TensorMap in = inputs(*m, 0.7, 1.0);
  auto reference = run_layerwise(*m, {{"onnxruntime", {}}}, in, {});
  ASSERT_TRUE(reference.has_value()) << reference.status().to_string();
  EXPECT_FALSE(reference->first.has_value());
  // The golden values: the reference's, through its hook on the model as the pass ran it.
  TensorMap golden;
  auto flat = surgeon::inline_taken_branches(m->proto, m->base_dir, in);
  ASSERT_TRUE(flat.has_value()) << flat.status().to_string();
  auto interp = reference::Interpreter::create(flat->model);
  ASSERT_TRUE(interp.has_value());
  ASSERT_TRUE((*interp)
                  ->run(in, [&](const onnx::NodeProto&, size_t, const std::string& name,
                                const Tensor& v) { golden[name] = v; })
                  .has_value());
  ASSERT_EQ(golden.count("b"), 1u);
  golden["b"].set_from_double(0, golden["b"].get_as_double(0) + 50.0);
  LayerwiseOptions opt;
  opt.golden = &golden;
  opt.golden_source = "golden.npz";
  auto r = run_layerwise(*m, {{"onnxruntime", {}}}, in, opt);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_TRUE(r->first.has_value());
  EXPECT_EQ(r->tensors[r->first->tensor].node, "outer/then_branch/If#0/then_branch/Mul#1");
  EXPECT_EQ(r->tensors[r->first->tensor].name, "b");
}

TEST_F(Layerwise, WithoutIsolationTheFirstFailingTensorIsNamed) {
  LoadedModel m = write(kDemo, "demo.onnx");
  auto r = run_layerwise(m, {{"opencv", {}}}, inputs(m), {});
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_TRUE(r->first.has_value());
  EXPECT_EQ(r->tensors[r->first->tensor].op_type, "Softmax");
  EXPECT_EQ(r->first->basis, "total");
  EXPECT_FALSE(r->first->own_error.has_value());
  // The first divergent node's golden inputs and outputs come from the spill file, so its repro
  // needs no reference run of its own.
  EXPECT_EQ(r->reference_runs, 1);
  EXPECT_EQ(r->first_node_values.count(r->tensors[r->first->tensor].name), 1u);
  EXPECT_FALSE(r->first_node_values.empty());
}

TEST_F(Layerwise, Float16OverflowIsFlaggedWhereInfAppears) {
  LoadedModel m = write(kFp16, "fp16.onnx");
  LayerwiseOptions opt;
  opt.isolate = true;
  auto r = run_layerwise(m, {{"onnxruntime", {}}}, inputs(m, 0.7, 1.0), opt);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  const LayerTensor* first_inf = nullptr;
  for (const auto& t : r->tensors)
    if (t.golden_nan_or_inf && !first_inf) first_inf = &t;
  ASSERT_NE(first_inf, nullptr);
  EXPECT_EQ(first_inf->name, "b");
  EXPECT_EQ(first_inf->golden_nan_or_inf, 8);
  const auto* a = find(*r, "onnxruntime", "a");
  const auto* b = find(*r, "onnxruntime", "b");
  const auto* y = find(*r, "onnxruntime", "y");
  ASSERT_TRUE(a && b && y);
  EXPECT_EQ(a->result.nan_or_inf_actual, 0);
  // ONNX Runtime's CPU provider has no float16 Mul: it computes a and b in float32 and drops the
  // rounding between them, so b does not overflow there (read through a Cast to float32, as every
  // float16 intermediate is), and the report says so; the graph output, cast to float16 at the
  // end, overflows as the reference's does (+Inf equals +Inf).
  EXPECT_TRUE(b->computed_in_float32);
  EXPECT_EQ(b->result.nan_or_inf_actual, 0);
  EXPECT_FALSE(b->result.pass);
  EXPECT_EQ(y->result.nan_or_inf_actual, 8);
  EXPECT_TRUE(y->result.pass);
  ASSERT_EQ(r->backends.size(), 1u);
  EXPECT_GE(r->backends[0].computed_in_float32, 2);
  ASSERT_FALSE(r->backends[0].notes.empty());
  EXPECT_NE(r->backends[0].notes.back().find("computed them in float32"), std::string::npos)
      << r->backends[0].notes.back();
}

// precision=fp16 backends get the model converted to float16. On the interpreter's float16 run
// the overflowing Mul is named by its own error; Relu reads its +Inf (its golden input is beyond
// float16's range too), so its error is inherited. ONNX Runtime's CPU provider has no float16
// Mul or Relu: it computes them in float32 between Casts it then drops, so nothing overflows
// there, and the report says it computed those tensors in float32. The same answers in one batch
// or in one batch per tensor; the repro holds the node in float16.
TEST_F(Layerwise, Float16BackendNamesTheNodeThatOverflows) {
  LoadedModel m = write(kFp32Overflow, "fp32.onnx");
  const TensorMap in = inputs(m, 0.7, 1.0);
  LayerwiseOptions opt;
  opt.isolate = true;
  opt.tolerance.default_tol = {1e-2, 1e-2};
  const std::vector<BackendSpec> specs = {{"onnxruntime", {{"precision", "fp16"}}},
                                          {"reference", {{"precision", "fp16"}}}};
  for (uint64_t budget : {uint64_t{2} << 30, uint64_t{32} * kLayerwiseCopies}) {
    SCOPED_TRACE(budget);
    opt.memory_budget = budget;
    auto r = run_layerwise(m, specs, in, opt);
    ASSERT_TRUE(r.has_value()) << r.status().to_string();
    ASSERT_EQ(r->backends.size(), 2u);
    for (const auto& b : r->backends) {
      EXPECT_TRUE(b.ok) << b.backend << ": " << b.error;
      EXPECT_EQ(b.batches, budget > 1000 ? 1 : 3) << b.backend;
    }

    const std::string ref = "reference:precision=fp16";
    const auto* a = find(*r, ref, "a");
    const auto* b = find(*r, ref, "b");
    const auto* y = find(*r, ref, "y");
    ASSERT_TRUE(a && b && y);
    EXPECT_TRUE(a->observed && a->result.pass);  // 700..1000 in float16: within 1e-2 relative
    EXPECT_GT(a->result.max_abs_error, 0);       // but rounded
    EXPECT_FALSE(a->computed_in_float32);
    EXPECT_FALSE(b->result.pass);
    EXPECT_EQ(b->result.nan_or_inf_actual, 8);
    ASSERT_TRUE(b->own.has_value());
    EXPECT_TRUE(b->own_failure());
    EXPECT_FALSE(b->input_beyond_fp16);
    ASSERT_TRUE(y->own.has_value());
    EXPECT_FALSE(y->own->pass);  // alone, its golden input is +Inf in float16 too
    EXPECT_TRUE(y->input_beyond_fp16);
    EXPECT_FALSE(y->own_failure());
    EXPECT_EQ(r->backends[1].computed_in_float32, 0);
    ASSERT_TRUE(r->backends[1].first.has_value());
    EXPECT_EQ(r->tensors[r->backends[1].first->tensor].name, "b");

    const std::string ort = "onnxruntime:precision=fp16";
    for (const char* name : {"a", "b", "y"}) {
      const auto* c = find(*r, ort, name);
      ASSERT_NE(c, nullptr) << name;
      EXPECT_TRUE(c->observed && c->result.pass) << name;
      EXPECT_EQ(c->result.max_abs_error, 0) << name;
      EXPECT_TRUE(c->computed_in_float32) << name;
    }
    EXPECT_EQ(r->backends[0].computed_in_float32, 3);
    ASSERT_EQ(r->backends[0].notes.size(), 1u);
    EXPECT_NE(r->backends[0].notes[0].find("3 of 3 float tensors hold values float16 cannot "
                                           "represent (first: 'a' of node #0 Mul)"),
              std::string::npos)
        << r->backends[0].notes[0];
    EXPECT_FALSE(r->backends[0].first.has_value());

    ASSERT_TRUE(r->first.has_value());
    EXPECT_EQ(r->tensors[r->first->tensor].name, "b");
    EXPECT_EQ(r->first->backend, ref);
    EXPECT_EQ(r->first->precision, "fp16");
    EXPECT_GT(r->tensors[r->first->tensor].golden_max_abs, 65504.0);

    // The repro: the Mul alone, in float16 between float32 Casts, failing as it did.
    const fs::path repro = dir_ / "repro";
    ASSERT_TRUE(save_layerwise_repro(m, in, *r, repro).is_ok());
    auto rm = load_model(repro / "model.onnx");
    ASSERT_TRUE(rm.has_value());
    std::vector<std::string> ops;
    for (const auto& n : rm->proto.graph().node()) ops.push_back(n.op_type());
    EXPECT_EQ(ops, (std::vector<std::string>{"Cast", "Mul", "Cast"}));
    auto rin = load_test_data_inputs(repro / "test_data_set_0", rm->proto.graph());
    auto rout = load_test_data_outputs(repro / "test_data_set_0", rm->proto.graph());
    ASSERT_TRUE(rin.has_value() && rout.has_value());
    EXPECT_EQ(rin->at("a").dtype(), DType::kFloat);
    auto got = testing::run_reference(rm->proto, *rin);
    EXPECT_EQ(count_nan_or_inf(got.at("b")), 8);
    EXPECT_FALSE(compare_tensors(got.at("b"), rout->at("b"), {1e-2, 1e-2}).pass);
  }
}

TEST_F(Layerwise, SmallBudgetMeansMoreBatchesNotOtherAnswers) {
  LoadedModel m = write(kDemo, "demo.onnx");
  const TensorMap in = inputs(m);
  LayerwiseOptions opt;
  opt.memory_budget = 48 * kLayerwiseCopies;  // one 1x3x4 float tensor per batch
  auto r = run_layerwise(m, {{"onnxruntime", {}}, {"opencv", {}}}, in, opt);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->backends[0].batches, 4);
  EXPECT_EQ(r->backends[1].batches, 4);
  // One reference run: its golden values are read back from the spill file for every batch.
  EXPECT_EQ(r->reference_runs, 1);
  EXPECT_EQ(r->spilled_bytes, 3 * 64 + 48u);  // four 48-byte tensors, 64-byte aligned
  EXPECT_TRUE(r->notes.empty());
  // ONNX Runtime computes each batch's nodes alone, fed its own earlier values; OpenCV reads
  // every layer by name in whole-model runs.
  const auto has_note = [](const LayerwiseBackend& b, const std::string& text) {
    return std::any_of(b.notes.begin(), b.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has_note(r->backends[0], "4 of 4 batches ran as segments"));
  EXPECT_FALSE(has_note(r->backends[1], "segments"));
  EXPECT_EQ(r->comparisons.size(), 8u);
  EXPECT_EQ(r->backends[0].failed, 0);
  ASSERT_TRUE(r->first.has_value());
  EXPECT_EQ(r->tensors[r->first->tensor].name, "probs");

  // Without room for the spill file the reference runs again beside every backend run, and a
  // spill file that takes some of the tensors saves the runs of the batches it holds: the same
  // comparisons either way.
  for (const auto& [max_spill, runs] : {std::pair<uint64_t, int>{0, 1 + 4 + 4}, {100, 1 + 3 + 3}}) {
    opt.max_spill_bytes = max_spill;
    auto again = run_layerwise(m, {{"onnxruntime", {}}, {"opencv", {}}}, in, opt);
    ASSERT_TRUE(again.has_value()) << again.status().to_string();
    EXPECT_EQ(again->reference_runs, runs) << max_spill;
    ASSERT_EQ(again->notes.size(), 1u);
    EXPECT_NE(again->notes[0].find("the reference ran again beside each backend run for the " +
                                   std::to_string(max_spill ? 3 : 4) + " tensors after it"),
              std::string::npos)
        << again->notes[0];
    ASSERT_EQ(again->comparisons.size(), r->comparisons.size());
    for (size_t i = 0; i < r->comparisons.size(); ++i) {
      EXPECT_EQ(again->comparisons[i].tensor, r->comparisons[i].tensor);
      EXPECT_EQ(again->comparisons[i].result.max_abs_error, r->comparisons[i].result.max_abs_error);
    }
  }
}

// A value no batch compares (here a sequence) is computed inside the segment that reads it: a
// segment starts right after the previous one's last node, so it holds SequenceConstruct.
TEST_F(Layerwise, ASequenceBetweenBatchesIsComputedInsideTheNextSegment) {
  LoadedModel m = write(R"(
<ir_version: 8, opset_import: ["" : 13]>
seq (float[1,3,4] a) => (float[1,3,4] out) {
  r = Relu(a)
  s = SequenceConstruct(r, a)
  zero = Constant<value = int64 {0}>()
  first = SequenceAt(s, zero)
  out = Neg(first)
})",
                        "seq.onnx");
  LayerwiseOptions opt;
  opt.memory_budget = 48 * kLayerwiseCopies;  // one 1x3x4 float tensor per batch
  auto r = run_layerwise(m, {{"onnxruntime", {}}}, inputs(m, -1, 1), opt);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_EQ(r->tensors.size(), 3u);  // r, first, out: the sequence is no tensor
  EXPECT_EQ(r->backends[0].batches, 3);
  EXPECT_EQ(r->backends[0].observed, 3);
  EXPECT_EQ(r->backends[0].failed, 0);
  EXPECT_EQ(r->reference_runs, 1);
  ASSERT_EQ(r->backends[0].notes.size(), 1u);
  EXPECT_NE(r->backends[0].notes[0].find("3 of 3 batches ran as segments"), std::string::npos)
      << r->backends[0].notes[0];
}

// Loaded golden values for every tensor: the batches run as segments as with the reference's,
// and give the same comparisons; without one that a later batch reads, they run the whole model.
TEST_F(Layerwise, LoadedGoldenValuesRunAsSegmentsWhenTheyHoldWhatSegmentsRead) {
  LoadedModel m = write(kDemo, "demo.onnx");
  const TensorMap in = inputs(m);
  LayerwiseOptions opt;
  opt.memory_budget = 48 * kLayerwiseCopies;  // one tensor per batch
  auto ref = run_layerwise(m, {{"onnxruntime", {}}}, in, opt);
  ASSERT_TRUE(ref.has_value()) << ref.status().to_string();
  EXPECT_EQ(ref->backends[0].notes.size(), 1u);  // "4 of 4 batches ran as segments ..."
  auto values = reference_layer_values(m, in, uint64_t{1} << 20);
  ASSERT_TRUE(values.has_value()) << values.status().to_string();
  TensorMap golden = std::move(*values);
  opt.golden = &golden;
  opt.golden_source = "golden.npz";
  auto loaded = run_layerwise(m, {{"onnxruntime", {}}}, in, opt);
  ASSERT_TRUE(loaded.has_value()) << loaded.status().to_string();
  EXPECT_EQ(loaded->reference_runs, 0);
  ASSERT_EQ(loaded->backends[0].notes.size(), 1u);
  EXPECT_NE(loaded->backends[0].notes[0].find("4 of 4 batches ran as segments"), std::string::npos)
      << loaded->backends[0].notes[0];
  ASSERT_EQ(loaded->comparisons.size(), ref->comparisons.size());
  for (size_t i = 0; i < ref->comparisons.size(); ++i)
    EXPECT_EQ(loaded->comparisons[i].result.max_abs_error,
              ref->comparisons[i].result.max_abs_error);

  const std::string read_later = ref->tensors[1].name;  // the second node's output feeds the third
  golden.erase(read_later);
  auto partial = run_layerwise(m, {{"onnxruntime", {}}}, in, opt);
  ASSERT_TRUE(partial.has_value()) << partial.status().to_string();
  EXPECT_EQ(partial->no_golden, std::vector<std::string>{read_later});
  EXPECT_EQ(partial->comparisons.size(), 3u);
  ASSERT_EQ(partial->backends[0].notes.size(), 1u);
  EXPECT_NE(partial->backends[0].notes[0].find("a later batch reads '" + read_later + "'"),
            std::string::npos)
      << partial->backends[0].notes[0];
}

TEST_F(Layerwise, ExtraOutputsAreCappedPerRun) {
  LoadedModel m = write(kDemo, "demo.onnx");
  LayerwiseOptions opt;
  opt.max_extra_outputs = 1;  // one extra output per ONNX Runtime run
  auto r = run_layerwise(m, {{"onnxruntime", {}}}, inputs(m), opt);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->backends[0].batches, 4);
  EXPECT_EQ(r->reference_runs, 1);  // the golden values come from the spill file
  EXPECT_EQ(r->comparisons.size(), 4u);
  EXPECT_EQ(r->backends[0].observed, 4);
  EXPECT_EQ(r->backends[0].failed, 0);
}

TEST_F(Layerwise, IsolationKeepsTheAnswerWhateverTheBatching) {
  LoadedModel m = write(kDemo, "demo.onnx");
  const TensorMap in = inputs(m);
  LayerwiseOptions opt;
  opt.isolate = true;
  auto one = run_layerwise(m, {{"opencv", {}}}, in, opt);
  ASSERT_TRUE(one.has_value()) << one.status().to_string();
  // One run: the batch and the divergent nodes' golden inputs come from the spill file.
  EXPECT_EQ(one->reference_runs, 1);
  ASSERT_TRUE(one->first.has_value() && one->first->own_error.has_value());
  EXPECT_FALSE(one->first_node_values.empty());

  opt.memory_budget = 48 * kLayerwiseCopies;  // one tensor per batch
  auto many = run_layerwise(m, {{"opencv", {}}}, in, opt);
  ASSERT_TRUE(many.has_value()) << many.status().to_string();
  EXPECT_EQ(many->backends[0].batches, 4);
  EXPECT_EQ(many->reference_runs, 1);
  ASSERT_TRUE(many->first.has_value() && many->first->own_error.has_value());
  EXPECT_EQ(many->tensors[many->first->tensor].name, one->tensors[one->first->tensor].name);
  EXPECT_EQ(*many->first->own_error, *one->first->own_error);

  opt.max_spill_bytes = 0;  // no spill file: the reference runs per batch and for isolation
  auto rerun = run_layerwise(m, {{"opencv", {}}}, in, opt);
  ASSERT_TRUE(rerun.has_value()) << rerun.status().to_string();
  EXPECT_EQ(rerun->reference_runs, 1 + 4 + 1);
  ASSERT_TRUE(rerun->first.has_value() && rerun->first->own_error.has_value());
  EXPECT_EQ(rerun->tensors[rerun->first->tensor].name, one->tensors[one->first->tensor].name);
  EXPECT_EQ(*rerun->first->own_error, *one->first->own_error);
}

// float32 golden statistics (counted on the values' bits, four at a time, then the tail): x * 1e38
// overflows to +Inf where x > 3.4, Log gives NaN for x < 0 and -Inf for 0.
TEST_F(Layerwise, Float32GoldenNanInfAndMaxAbs) {
  LoadedModel m = write(R"(
<ir_version: 8, opset_import: ["" : 13]>
stats (float[7] x) => (float[7] y, float[7] z)
<float[1] k = {1e38}>
{
  y = Mul(x, k)
  z = Log(x)
}
)",
                        "stats.onnx");
  TensorMap in = {
      {"x", Tensor::from_vector<float>({7}, {-2.0f, 0.0f, 1.0f, 3.0f, 3.5f, 0.5f, 4.0f})}};
  auto r = run_layerwise(m, {{"onnxruntime", {}}}, in, {});
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  ASSERT_EQ(r->tensors.size(), 2u);
  EXPECT_EQ(r->tensors[0].name, "y");
  EXPECT_EQ(r->tensors[0].golden_nan_or_inf, 2);  // 3.5e38 and 4e38
  EXPECT_EQ(r->tensors[0].golden_max_abs, static_cast<double>(3.0f * 1e38f));
  EXPECT_EQ(r->tensors[1].golden_nan_or_inf, 2);  // log(-2) = NaN, log(0) = -Inf
  EXPECT_EQ(r->tensors[1].golden_max_abs, static_cast<double>(std::log(4.0f)));
}

TEST_F(Layerwise, BudgetTooSmallForOneTensorIsAClearError) {
  LoadedModel m = write(kDemo, "demo.onnx");
  LayerwiseOptions opt;
  opt.memory_budget = 90;  // two copies of the 48-byte tensor do not fit
  auto r = run_layerwise(m, {{"onnxruntime", {}}}, inputs(m), opt);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("too small for tensor 'proj'"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("at least 96 B"), std::string::npos) << r.status().message();
}

TEST_F(Layerwise, ABackendThatCannotLoadIsRecordedNotFatal) {
  LoadedModel m = write(kDemo, "demo.onnx");
  auto r =
      run_layerwise(m, {{"onnxruntime", {{"debug_crash", "load"}}}, {"opencv", {}}}, inputs(m), {});
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_FALSE(r->backends[0].ok);
  EXPECT_NE(r->backends[0].error.find("SIGSEGV"), std::string::npos) << r->backends[0].error;
  EXPECT_TRUE(r->backends[1].ok);
  EXPECT_EQ(r->backends[1].observed, 4);
}

// A segment the backend cannot run falls back to the whole model with extra outputs: here the
// worker crashes on every run, so the fallback fails too and the backend is recorded as failed,
// with a note saying which batch could not run as a segment and why.
TEST_F(Layerwise, ASegmentThatFailsFallsBackToTheWholeModel) {
  LoadedModel m = write(kDemo, "demo.onnx");
  LayerwiseOptions opt;
  opt.memory_budget = 48 * kLayerwiseCopies;  // four batches: segments
  auto r = run_layerwise(m, {{"onnxruntime", {{"debug_crash", "run"}}}}, inputs(m), opt);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_FALSE(r->backends[0].ok);
  EXPECT_NE(r->backends[0].error.find("SIGSEGV"), std::string::npos) << r->backends[0].error;
  ASSERT_EQ(r->backends[0].notes.size(), 1u);
  const std::string& note = r->backends[0].notes[0];
  EXPECT_NE(note.find("batch 1 could not run as a segment"), std::string::npos) << note;
  EXPECT_NE(note.find("SIGSEGV"), std::string::npos) << note;
  EXPECT_NE(note.find("every batch ran the whole model"), std::string::npos) << note;
}

// Golden values loaded instead of the reference's (LayerwiseOptions::golden), e.g. dumped by
// PyTorch: a chain of four nodes whose every tensor's golden value the tests set one by one.
const char* const kChain = R"(
<ir_version: 8, opset_import: ["" : 13]>
chain (float[2,3] x) => (float[2,3] y) {
  a = Relu(x)
  b = Neg(a)
  c = Sigmoid(b)
  y = Abs(c)
}
)";

class LoadedGolden : public Layerwise {
 protected:
  void SetUp() override {
    Layerwise::SetUp();
    model_ = write(kChain, "chain.onnx");
    in_ = {{"x", Tensor::from_vector<float>({2, 3}, {-1, 0.5f, 2, -0.25f, 3, 0.75f})}};
    auto values = reference_layer_values(model_, in_, uint64_t{1} << 20);
    ASSERT_TRUE(values.has_value()) << values.status().to_string();
    golden_ = std::move(*values);
    ASSERT_EQ(golden_.size(), 4u);  // a, b, c, y
  }
  /// Adds `delta` to element `i` of the golden value of `name`.
  void perturb(const std::string& name, int64_t i, float delta) {
    golden_.at(name).data<float>()[i] += delta;
  }
  Expected<LayerwiseReport> run(const std::vector<BackendSpec>& backends, bool isolate) {
    LayerwiseOptions opt;
    opt.golden = &golden_;
    opt.golden_source = "golden.npz";
    opt.isolate = isolate;
    return run_layerwise(model_, backends, in_, opt);
  }
  static std::string first_tensor(const LayerwiseReport& r, const std::string& backend) {
    for (const auto& b : r.backends)
      if (b.backend == backend && b.first) return r.tensors[b.first->tensor].name;
    return "";
  }
  LoadedModel model_;
  TensorMap in_;
  TensorMap golden_;
};

TEST_F(LoadedGolden, UnperturbedValuesAgreeOnEveryBackendWithoutAReferenceRun) {
  auto r = run({{"reference", {}}, {"onnxruntime", {}}}, /*isolate=*/false);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->golden_source, "golden.npz");
  ASSERT_EQ(r->tensors.size(), 4u);
  EXPECT_TRUE(r->no_golden.empty());
  EXPECT_EQ(r->reference_runs, 0);  // the loaded values are the golden ones
  ASSERT_EQ(r->backends.size(), 2u);
  for (const auto& b : r->backends) {
    EXPECT_TRUE(b.ok) << b.backend << ": " << b.error;
    EXPECT_EQ(b.observed, 4) << b.backend;
    EXPECT_EQ(b.failed, 0) << b.backend;
  }
  EXPECT_FALSE(r->first.has_value());
}

TEST_F(LoadedGolden, APerturbedTensorsProducerIsTheFirstDivergentNode) {
  perturb("b", 4, 0.5f);  // Neg's output, off by 0.5 in one element
  auto r = run({{"reference", {}}, {"onnxruntime", {}}}, /*isolate=*/false);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(first_tensor(*r, "reference"), "b");
  EXPECT_EQ(first_tensor(*r, "onnxruntime"), "b");
  ASSERT_TRUE(r->first.has_value());
  EXPECT_EQ(r->tensors[r->first->tensor].op_type, "Neg");
  EXPECT_EQ(r->first->backend, "reference");  // ties: the backend listed first
  // Only that tensor fails: the backends compute 'c' from their own 'b'.
  for (const auto& b : r->backends) EXPECT_EQ(b.failed, 1) << b.backend;
  const auto* c = find(*r, "onnxruntime", "b");
  ASSERT_NE(c, nullptr);
  EXPECT_FLOAT_EQ(c->result.max_abs_error, 0.5f);
}

TEST_F(LoadedGolden, TensorsWithoutALoadedValueAreListedNotCompared) {
  golden_.erase("a");
  golden_.erase("c");
  perturb("y", 0, 0.25f);
  auto r = run({{"onnxruntime", {}}}, /*isolate=*/false);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->no_golden, (std::vector<std::string>{"a", "c"}));
  ASSERT_EQ(r->tensors.size(), 2u);
  EXPECT_EQ(r->tensors[0].name, "b");
  EXPECT_EQ(r->tensors[1].name, "y");
  EXPECT_EQ(r->tensors[1].node_index, 3u);
  EXPECT_EQ(r->comparisons.size(), 2u);
  EXPECT_EQ(find(*r, "onnxruntime", "a"), nullptr);
  EXPECT_EQ(r->backends[0].observed, 2);
  EXPECT_EQ(first_tensor(*r, "onnxruntime"), "y");
}

TEST_F(LoadedGolden, IsolationReadsTheLoadedValues) {
  // 'a' off by 0.5 and 'b' consistent with it: Relu is wrong on its own, Neg only inherits.
  // Neg isolated on the reference's 'a' would fail on its own instead.
  perturb("a", 1, 0.5f);
  perturb("b", 1, -0.5f);
  auto r = run({{"onnxruntime", {}}, {"reference", {}}}, /*isolate=*/true);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->reference_runs, 0);  // every golden input was loaded
  for (const char* backend : {"onnxruntime", "reference"}) {
    const auto* a = find(*r, backend, "a");
    const auto* b = find(*r, backend, "b");
    ASSERT_TRUE(a && b) << backend;
    ASSERT_TRUE(a->own.has_value() && b->own.has_value()) << backend;
    EXPECT_TRUE(a->own_failure()) << backend;
    EXPECT_FALSE(b->result.pass) << backend;
    EXPECT_TRUE(b->own->pass) << backend << ": own error " << b->own->max_abs_error;
    EXPECT_EQ(first_tensor(*r, backend), "a") << backend;
  }
  ASSERT_TRUE(r->first.has_value());
  EXPECT_EQ(r->first->basis, "own");
  EXPECT_FLOAT_EQ(static_cast<float>(*r->first->own_error), 0.5f);

  // The repro folder holds the loaded golden values: Relu's output as loaded, off by 0.5.
  const fs::path repro = dir_ / "repro";
  ASSERT_TRUE(save_layerwise_repro(model_, in_, *r, repro, {}, &golden_).is_ok());
  auto rm = load_model(repro / "model.onnx");
  ASSERT_TRUE(rm.has_value());
  auto rout = load_test_data_outputs(repro / "test_data_set_0", rm->proto.graph());
  ASSERT_TRUE(rout.has_value()) << rout.status().to_string();
  EXPECT_FLOAT_EQ(rout->at("a").data<float>()[1], golden_.at("a").data<float>()[1]);
}

TEST_F(LoadedGolden, AMissingGoldenInputOfAnIsolatedNodeComesFromTheReference) {
  golden_.erase("a");
  perturb("b", 2, 0.5f);
  auto r = run({{"onnxruntime", {}}}, /*isolate=*/true);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ(r->reference_runs, 1);  // 'a', Neg's input, for its isolation
  ASSERT_TRUE(r->first.has_value());
  EXPECT_EQ(r->tensors[r->first->tensor].name, "b");
  EXPECT_EQ(r->first->basis, "own");
  EXPECT_FLOAT_EQ(static_cast<float>(*r->first->own_error), 0.5f);
}

TEST_F(LoadedGolden, AMissingGoldenInputIsComputedFromTheLoadedValuesUpstream) {
  // The framework's Relu differs (a[1] + 0.5) and its dump lacks 'b' (fused away by a
  // converter); 'c' and 'y' are the framework's, consistent with its 'a'. Sigmoid isolated on
  // the reference's own 'b' (from the model's Relu) would fail on its own; on 'b' computed from
  // the loaded 'a' it agrees: Relu is the node to blame, Sigmoid only inherits.
  perturb("a", 1, 0.5f);
  golden_.erase("b");
  float* c = golden_.at("c").data<float>();
  float* y = golden_.at("y").data<float>();
  c[1] = 1.f / (1.f + std::exp(golden_.at("a").data<float>()[1]));  // sigmoid(-a)
  y[1] = std::abs(c[1]);
  auto r = run({{"onnxruntime", {}}, {"reference", {}}}, /*isolate=*/true);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  for (const char* backend : {"onnxruntime", "reference"}) {
    const auto* sig = find(*r, backend, "c");
    ASSERT_TRUE(sig && sig->own.has_value()) << backend;
    EXPECT_FALSE(sig->result.pass) << backend;
    EXPECT_TRUE(sig->own->pass) << backend << ": own error " << sig->own->max_abs_error;
    // 'b' was never compared: inherited through it, not an error of how it ran in context.
    EXPECT_TRUE(sig->input_failed) << backend;
    EXPECT_FALSE(sig->context_failure()) << backend;
    EXPECT_EQ(first_tensor(*r, backend), "a") << backend;
  }
}

TEST_F(LoadedGolden, AValueOfAnotherTypeOrShapeIsRefusedInOneSentence) {
  golden_["b"] = Tensor::from_vector<double>({2, 3}, {0, 0, 0, 0, 0, 0});
  auto r = run({{"onnxruntime", {}}}, /*isolate=*/false);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'golden.npz' holds 'b' as float64, but the model's tensor "
                                      "'b' (output of node #1 Neg) is float32"),
            std::string::npos)
      << r.status().message();
  golden_["b"] = Tensor::from_vector<float>({3, 2}, {0, 0, 0, 0, 0, 0});
  r = run({{"onnxruntime", {}}}, /*isolate=*/false);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("holds 'b' with shape [3x2], but the model's tensor 'b' "),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("has shape [2x3]"), std::string::npos)
      << r.status().message();
}

TEST(MemorySize, ParsesUnitsAndRefusesNonsense) {
  EXPECT_EQ(*parse_memory_size("2GiB"), uint64_t{2} << 30);
  EXPECT_EQ(*parse_memory_size("512MiB"), uint64_t{512} << 20);
  EXPECT_EQ(*parse_memory_size("1.5GB"), 1500000000u);
  EXPECT_EQ(*parse_memory_size("64k"), 64000u);
  EXPECT_EQ(*parse_memory_size("65536"), 65536u);
  EXPECT_EQ(*parse_memory_size("1 gib"), uint64_t{1} << 30);
  for (const char* bad : {"", "GiB", "2 parsecs", "-1GiB", "0", "1e3", "2GiBs"})
    EXPECT_FALSE(parse_memory_size(bad).has_value()) << bad;
  EXPECT_EQ(memory_size_string(uint64_t{2} << 30), "2 GiB");
  EXPECT_EQ(memory_size_string(144), "144 B");
}

}  // namespace
}  // namespace onnxdbg
