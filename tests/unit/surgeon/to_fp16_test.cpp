// to-fp16: weights and activations to float16 with --keep-io-types and a block list; the result
// runs on the reference and matches the float32 model within float16 precision.
#include <gtest/gtest.h>

#include "model/graph.h"
#include "surgeon_test_util.h"

namespace onnxdbg::surgeon {
namespace {

using namespace testing;

const char* kToFp16Model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,4] x) => (float[2,3] y, float[2,3] logits)
<float[4,3] w = {0.5, -0.25, 0.0, 1.0, 0.75, 0.5, -1.0, 0.25, -0.5, 1.0, 0.5, 0.0},
 float[3] b = {0.1, 0.2, 0.3}>
{
  mm = MatMul(x, w)
  logits = Add(mm, b)
  r = Relu(logits)
  half = Constant<value = float {0.5}>()
  s = Mul(r, half)
  y = Softmax<axis = -1>(s)
})";

int32_t elem_type(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& vi : m.graph().input())
    if (vi.name() == name) return vi.type().tensor_type().elem_type();
  for (const auto& vi : m.graph().output())
    if (vi.name() == name) return vi.type().tensor_type().elem_type();
  for (const auto& vi : m.graph().value_info())
    if (vi.name() == name) return vi.type().tensor_type().elem_type();
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) return t.data_type();
  return -1;
}

TEST(ToFp16, KeepIoTypesAndBlockList) {
  const auto original = parse_text_model(kToFp16Model);
  auto m = original;
  Fp16Options opt;
  opt.keep_io_types = true;
  opt.block_list = {"Softmax"};
  auto st = to_fp16(m, {}, opt);
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->initializers_converted, 2);
  EXPECT_EQ(st->blocked_nodes, 1);
  EXPECT_EQ(elem_type(m, "x"), onnx::TensorProto::FLOAT);
  EXPECT_EQ(elem_type(m, "y"), onnx::TensorProto::FLOAT);
  EXPECT_EQ(elem_type(m, "logits"), onnx::TensorProto::FLOAT);
  EXPECT_EQ(elem_type(m, "w"), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(elem_type(m, "r"), onnx::TensorProto::FLOAT16);
  // Softmax runs in float32: its input is a Cast to float.
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "Softmax") {
      EXPECT_EQ(elem_type(m, n.input(0)), onnx::TensorProto::FLOAT);
    }
  }
  // x -> fp16, s -> fp32 (Softmax), logits back to fp32 for the output.
  EXPECT_EQ(count_op(m, "Cast"), 3);
  expect_lint_clean(m);
  expect_same_outputs(original, m, {{"x", ramp({2, 4})}}, 2e-3, 2e-3);
}

TEST(ToFp16, WithoutKeepIoTypesInputsBecomeHalf) {
  const auto original = parse_text_model(kToFp16Model);
  auto m = original;
  auto st = to_fp16(m, {}, {});
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->casts_inserted, 0);
  EXPECT_EQ(elem_type(m, "x"), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(elem_type(m, "y"), onnx::TensorProto::FLOAT16);
  expect_lint_clean(m);
  Tensor x = ramp({2, 4});
  auto xh = cast_tensor(x, DType::kFloat16);
  ASSERT_TRUE(xh.has_value());
  auto a = run_reference(original, {{"x", x}});
  auto b = run_reference(m, {{"x", *xh}});
  for (const auto& [name, t] : a)
    onnxdbg::testing::expect_tensor_near(b.at(name), t.shape(), onnxdbg::testing::values(t), 3e-3,
                                         3e-3);
}

// The element type of `name` as declared in `g` (inputs, outputs, initializers), -1 if not there.
int32_t declared_type(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& vi : g.input())
    if (vi.name() == name) return vi.type().tensor_type().elem_type();
  for (const auto& vi : g.output())
    if (vi.name() == name) return vi.type().tensor_type().elem_type();
  for (const auto& t : g.initializer())
    if (t.name() == name) return t.data_type();
  return -1;
}

// No body declares a float32 output or holds a float32 initializer.
void expect_bodies_half(const onnx::ModelProto& m) {
  int bodies = 0;
  walk_graphs(m.graph(), [&](const GraphVisit& v) {
    if (v.depth == 0) return;
    ++bodies;
    for (const auto& o : v.graph->output())
      EXPECT_NE(o.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT)
          << v.path << " output " << o.name();
    for (const auto& t : v.graph->initializer())
      EXPECT_NE(t.data_type(), onnx::TensorProto::FLOAT) << v.path << " " << t.name();
  });
  EXPECT_GT(bodies, 0);
}

// Nested Ifs whose branches read outer values (x, a) and hold an initializer (k).
const char* kBranches = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[4] x) => (float[4] y, float[4] z)
{
  a = Relu(x)
  y = If(c) <
    then_branch = then_g () => (float[4] p) {
      s = Sigmoid(x)
      p = If(c) <
        then_branch = t2 () => (float[4] q) { q = Add(s, a) },
        else_branch = e2 () => (float[4] r) { r = Neg(s) }
      >
    },
    else_branch = else_g () => (float[4] b) <float[4] k = {1.0, 2.0, 3.0, 4.0}> {
      b = Mul(a, k)
    }
  >
  z = Abs(a)
})";

TEST(ToFp16, IfBranchesAreConvertedWithTheirNodes) {
  const auto original = parse_text_model(kBranches);
  auto m = original;
  Fp16Options opt;
  opt.keep_io_types = true;
  auto st = to_fp16(m, {}, opt);
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->blocked_nodes, 0);
  EXPECT_EQ(st->initializers_converted, 1);  // k, inside the else branch
  expect_bodies_half(m);
  // The If gives float16 (its outputs are Cast back for keep_io_types); the else branch reads
  // the outer `a`, which is float16 already, without a Cast of its own.
  EXPECT_EQ(elem_type(m, "y"), onnx::TensorProto::FLOAT);
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "If") {
      EXPECT_EQ(n.attribute(1).g().node_size(), 1);  // b = Mul(a, k)
      EXPECT_EQ(n.attribute(1).g().node(0).input(0), "a");
    }
  }
  expect_lint_clean(m);
  for (bool c : {true, false}) {
    SCOPED_TRACE(c);
    expect_same_outputs(original, m, {{"c", Tensor::scalar<bool>(c)}, {"x", ramp({4})}}, 2e-3,
                        2e-3);
  }
}

TEST(ToFp16, LoopCarriedValuesAndScanStatesBecomeHalf) {
  const auto loop = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int64 m, float[1] init, float[1] step) => (float[N] acc, float[K,1] trace) {
  cond = Constant<value = bool {1}>()
  acc, trace = Loop(m, cond, init) <
    body = body_g (int64 i, bool c_in, float[M] a_in) => (bool c_out, float[P] a_out, float[1] t) {
      c_out = Identity(c_in)
      a_out = Concat<axis = 0>(a_in, step)
      half = Constant<value = float {0.5}>()
      t = Mul(step, half)
    }
  >
})");
  auto m = loop;
  Fp16Options opt;
  opt.keep_io_types = true;
  auto st = to_fp16(m, {}, opt);
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->constants_converted, 1);
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "Loop") {
      const auto& b = n.attribute(0).g();
      EXPECT_EQ(declared_type(b, "a_in"), onnx::TensorProto::FLOAT16);
      EXPECT_EQ(declared_type(b, b.output(1).name()), onnx::TensorProto::FLOAT16);
      EXPECT_EQ(count_op(b, "Cast"), 1);  // the outer step, read once as float16
    }
  }
  expect_bodies_half(m);
  expect_lint_clean(m);
  const std::map<std::string, Tensor> in = {{"m", Tensor::scalar<int64_t>(3)},
                                            {"init", Tensor::from_vector<float>({1}, {1})},
                                            {"step", Tensor::from_vector<float>({1}, {0.3f})}};
  expect_same_outputs(loop, m, in, 2e-3, 2e-3);

  const auto scan = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[1] s0, float[3,1] x) => (float[1] s, float[3,2] y) {
  s, y = Scan(s0, x) <
    num_scan_inputs = 1,
    scan_input_directions = [1],
    body = body_g (float[1] prev, float[1] cur) => (float[1] next, float[2] pair) {
      next = Add(prev, cur)
      pair = Concat<axis = 0>(prev, cur)
    }
  >
})");
  m = scan;
  ASSERT_TRUE(to_fp16(m, {}, opt).has_value());
  expect_bodies_half(m);
  expect_lint_clean(m);
  expect_same_outputs(scan, m,
                      {{"s0", Tensor::from_vector<float>({1}, {0.25f})},
                       {"x", Tensor::from_vector<float>({3, 1}, {1, 2, 3})}},
                      2e-3, 2e-3);
}

TEST(ToFp16, ABlockedIfKeepsItsBranchesFloat32) {
  const auto original = parse_text_model(kBranches);
  auto m = original;
  Fp16Options opt;
  opt.block_list = {"If"};
  opt.keep_io_types = true;
  auto st = to_fp16(m, {}, opt);
  ASSERT_TRUE(st.has_value()) << st.status().to_string();
  EXPECT_EQ(st->blocked_nodes, 1);  // the outer If; the nested one is not visited
  EXPECT_EQ(st->initializers_converted, 0);
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "If") {
      EXPECT_EQ(declared_type(n.attribute(1).g(), "k"), onnx::TensorProto::FLOAT);
    }
  }
  expect_lint_clean(m);
  expect_same_outputs(original, m, {{"c", Tensor::scalar<bool>(false)}, {"x", ramp({4})}}, 2e-3,
                      2e-3);
}

}  // namespace
}  // namespace onnxdbg::surgeon
