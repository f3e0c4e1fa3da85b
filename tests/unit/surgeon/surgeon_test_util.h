// Helpers for surgeon tests: random inputs, output comparison between an original and an edited
// model on the reference interpreter, and node counting by op type.
#pragma once

#include <gtest/gtest.h>

#include "surgeon/surgeon.h"
#include "test_util.h"

namespace onnxdbg::surgeon::testing {

using onnxdbg::testing::parse_text_model;
using onnxdbg::testing::run_reference;

/// Deterministic float32 values in [-1, 1).
inline Tensor ramp(const Shape& shape, float scale = 1.0f) {
  Tensor t(DType::kFloat, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = scale * (static_cast<float>((i * 37) % 101) / 50.5f - 1.0f);
  return t;
}

/// Runs both models with `inputs` and expects every output of `a` to match `b`'s (same name,
/// shape, values within atol + rtol*|a|; b's values are compared as doubles, any dtype).
inline void expect_same_outputs(const onnx::ModelProto& a, const onnx::ModelProto& b,
                                const std::map<std::string, Tensor>& inputs, double atol = 1e-5,
                                double rtol = 1e-5) {
  auto ra = run_reference(a, inputs);
  auto rb = run_reference(b, inputs);
  ASSERT_FALSE(ra.empty());
  ASSERT_EQ(ra.size(), rb.size());
  for (const auto& [name, ta] : ra) {
    auto it = rb.find(name);
    ASSERT_NE(it, rb.end()) << name;
    onnxdbg::testing::expect_tensor_near(it->second, ta.shape(), onnxdbg::testing::values(ta), atol,
                                         rtol);
  }
}

// Nested Ifs (inline_if_test.cpp, taken_branches_test.cpp): the then branch defines `a`, a name
// the main graph uses too, and reads it in a nested If; the else branch passes the outer `a`
// through and holds an initializer.
inline const char* const kNested = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[4] x) => (float[4] y, float[4] z)
{
  a = Relu(x)
  y = If(c) <
    then_branch = then_g () => (float[4] p) {
      a = Sigmoid(x)
      p = If(c) <
        then_branch = t2 () => (float[4] q) { q = Add(a, a) },
        else_branch = e2 () => (float[4] r) { r = Neg(a) }
      >
    },
    else_branch = else_g () => (float[4] b) <float[4] k = {1.0, 2.0, 3.0, 4.0}> {
      b = Mul(a, k)
    }
  >
  z = Abs(a)
})";

/// Nodes of op type `op` in `g` (its own nodes, not its bodies').
inline int count_op(const onnx::GraphProto& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.node()) n += node.op_type() == op;
  return n;
}
/// The same in `m`'s main graph.
inline int count_op(const onnx::ModelProto& m, const std::string& op) {
  return count_op(m.graph(), op);
}

inline void expect_lint_clean(const onnx::ModelProto& m) {
  Status st = finish_edit(m, {});
  EXPECT_TRUE(st.is_ok()) << st.to_string();
}

}  // namespace onnxdbg::surgeon::testing
