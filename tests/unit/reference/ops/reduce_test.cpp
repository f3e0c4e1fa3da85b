// Tests of the Reduce* kernels, ArgMax/ArgMin, CumSum and CumProd: axes as attribute and as input,
// negative axes, keepdims, noop_with_empty_axes, integer, bool and float16 inputs, and bad axes.
#include <cmath>

#include "op_test_util.h"
#include "reference/kernel.h"

namespace onnxdbg::testing {
namespace {

// x = [[1, 2, 3], [4, 5, 6]]
Tensor x23() { return f32({2, 3}, {1, 2, 3, 4, 5, 6}); }

// z = <node>(x) on the 2x3 float x at `opset`; the output is declared without a shape.
Tensor reduce(const std::string& node, int opset = 11, Tensor x = x23()) {
  return run_op("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
                    "]>\n"
                    "g (float[2,3] x) => (float z) { z = " +
                    node + "(x) }",
                {{"x", std::move(x)}});
}

TEST(ReduceOps, AxesAttributeKeepdims) {
  expect_tensor_near(reduce("ReduceSum <axes = [1]>"), {2, 1}, {6, 15});
  expect_tensor_near(reduce("ReduceSum <axes = [0], keepdims = 0>"), {3}, {5, 7, 9});
  expect_tensor_near(reduce("ReduceSum"), {1, 1}, {21});
  expect_tensor_near(reduce("ReduceSum <keepdims = 0>"), {}, {21});
  expect_tensor_near(reduce("ReduceMean <axes = [-1]>", 13), {2, 1}, {2, 5});
}

TEST(ReduceOps, EveryKind) {
  const std::string a = " <axes = [1], keepdims = 0>";
  expect_tensor_near(reduce("ReduceMax" + a), {2}, {3, 6});
  expect_tensor_near(reduce("ReduceMin" + a), {2}, {1, 4});
  expect_tensor_near(reduce("ReduceProd" + a), {2}, {6, 120});
  expect_tensor_near(reduce("ReduceL1" + a, 13, f32({2, 3}, {1, -2, 3, -4, 5, -6})), {2}, {6, 15});
  expect_tensor_near(reduce("ReduceL2" + a), {2}, {std::sqrt(14.0), std::sqrt(77.0)});
  expect_tensor_near(reduce("ReduceSumSquare" + a), {2}, {14, 77});
  expect_tensor_near(reduce("ReduceLogSum" + a), {2}, {std::log(6.0), std::log(15.0)});
  expect_tensor_near(reduce("ReduceLogSumExp" + a), {2},
                     {std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)),
                      std::log(std::exp(4.0) + std::exp(5.0) + std::exp(6.0))});
}

TEST(ReduceOps, LogSumExpOfLargeValues) {
  auto z = reduce("ReduceLogSumExp <axes = [1], keepdims = 0>", 13,
                  f32({2, 3}, {1000, 1000, 1000, -1000, -1000, -1000}));
  expect_tensor_near(z, {2}, {1000 + std::log(3.0), -1000 + std::log(3.0)}, 1e-3, 1e-6);
}

TEST(ReduceOps, MaxPropagatesNan) {
  auto z = reduce("ReduceMax <axes = [1], keepdims = 0>", 13, f32({2, 3}, {1, NAN, 3, 4, 5, 6}));
  expect_tensor_near(z, {2}, {NAN, 6});
}

TEST(ReduceOps, ReduceSum13TakesAxesInput) {
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x, int64[1] axes) => (float z) { z = ReduceSum <keepdims = 0> (x, axes) })";
  expect_tensor_near(run_op(m, {{"x", x23()}, {"axes", tensor<int64_t>({1}, {-2})}}), {3},
                     {5, 7, 9});
  // Omitted axes: reduce everything, unless noop_with_empty_axes.
  auto all = run_op(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float z) { z = ReduceSum(x) })",
                    {{"x", x23()}});
  expect_tensor_near(all, {1, 1}, {21});
  auto noop = run_op(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x, int64[0] axes) => (float z) {
      z = ReduceSum <noop_with_empty_axes = 1> (x, axes)
    })",
                     {{"x", x23()}, {"axes", tensor<int64_t>({0}, {})}});
  expect_tensor_near(noop, {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(ReduceOps, Opset18TakesAxesInputForTheOthers) {
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 18]>
    g (float[2,3] x, int64[1] axes) => (float z) { z = ReduceMean <keepdims = 0> (x, axes) })";
  expect_tensor_near(run_op(m, {{"x", x23()}, {"axes", tensor<int64_t>({1}, {1})}}), {2}, {2, 5});
  const auto& r = reference::KernelRegistry::global();
  EXPECT_EQ(r.find("", "ReduceMean", 17)->since_version, 1);
  EXPECT_EQ(r.find("", "ReduceSum", 17)->since_version, 13);
}

TEST(ReduceOps, Integers) {
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (int32[2,3] x) => (int32[2] z) { z = ReduceMean <axes = [1], keepdims = 0> (x) })",
                  {{"x", tensor<int32_t>({2, 3}, {1, 2, 4, -7, 0, 0})}});
  EXPECT_EQ(values(z), (std::vector<double>{2, -2}));  // 7/3 and -7/3 truncate
  auto outs = run_reference(parse_text_model(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (int64[2,3] x) => (int64[2] s, int64[2] p, int64[2] mx) {
      s = ReduceSumSquare <axes = [1], keepdims = 0> (x)
      p = ReduceProd <axes = [1], keepdims = 0> (x)
      mx = ReduceMax <axes = [1], keepdims = 0> (x)
    })"),
                            {{"x", tensor<int64_t>({2, 3}, {1, 2, 4, -7, 3, 1})}});
  EXPECT_EQ(values(outs["s"]), (std::vector<double>{21, 59}));
  EXPECT_EQ(values(outs["p"]), (std::vector<double>{8, -21}));
  EXPECT_EQ(values(outs["mx"]), (std::vector<double>{4, 3}));
}

TEST(ReduceOps, Float16) {
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float16[2,2] x) => (float16[2] z) { z = ReduceMean <axes = [0], keepdims = 0> (x) })",
                  {{"x", f16({2, 2}, {1, 2, 2, 3})}});
  ASSERT_EQ(z.dtype(), DType::kFloat16);
  expect_tensor_near(z, {2}, {1.5, 2.5}, 0, 0);
}

TEST(ReduceOps, BadAxesAreErrors) {
  auto e1 = run_op_error(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float z) { z = ReduceMax <axes = [2]> (x) })",
                         {{"x", x23()}});
  EXPECT_NE(e1.find("axis 2 is out of range for rank 2"), std::string::npos) << e1;
  auto e2 = run_op_error(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float z) { z = ReduceMin <axes = [1, -1]> (x) })",
                         {{"x", x23()}});
  EXPECT_NE(e2.find("is repeated"), std::string::npos) << e2;
}

TEST(ReduceOps, ArgMaxArgMin) {
  auto x = f32({2, 3}, {3, 1, 3, 0, 5, 0});
  expect_tensor_near(reduce("ArgMax <axis = 1>", 13, x), {2, 1}, {0, 1}, 0, 0);
  expect_tensor_near(reduce("ArgMax <axis = -1, select_last_index = 1>", 13, x), {2, 1}, {2, 1}, 0,
                     0);
  expect_tensor_near(reduce("ArgMin <axis = 1, keepdims = 0>", 13, x), {2}, {1, 0}, 0, 0);
  expect_tensor_near(reduce("ArgMin <axis = 1, keepdims = 0, select_last_index = 1>", 13, x), {2},
                     {1, 2}, 0, 0);
  auto z = reduce("ArgMax", 13, x);  // default axis 0
  ASSERT_EQ(z.dtype(), DType::kInt64);
  expect_tensor_near(z, {1, 3}, {0, 1, 0}, 0, 0);
  auto ints = run_op(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (uint8[4] x) => (int64 z) { z = ArgMax <keepdims = 0> (x) })",
                     {{"x", tensor<uint8_t>({4}, {3, 200, 7, 200})}});
  expect_tensor_near(ints, {}, {1}, 0, 0);
}

TEST(ReduceOps, CumSum) {
  auto run = [](const std::string& attrs, int64_t axis) {
    return run_op(
        "<ir_version: 8, opset_import: [\"\" : 14]>\n"
        "g (float[2,3] x, int64 axis) => (float[2,3] z) { z = CumSum " +
            attrs + "(x, axis) }",
        {{"x", x23()}, {"axis", Tensor::scalar<int64_t>(axis)}});
  };
  expect_tensor_near(run("", 1), {2, 3}, {1, 3, 6, 4, 9, 15});
  expect_tensor_near(run("", -2), {2, 3}, {1, 2, 3, 5, 7, 9});
  expect_tensor_near(run("<exclusive = 1>", 1), {2, 3}, {0, 1, 3, 0, 4, 9});
  expect_tensor_near(run("<reverse = 1>", 1), {2, 3}, {6, 5, 3, 15, 11, 6});
  expect_tensor_near(run("<exclusive = 1, reverse = 1>", 1), {2, 3}, {5, 3, 0, 11, 6, 0});
  auto i =
      run_op(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (int32[4] x, int32 axis) => (int32[4] z) { z = CumSum(x, axis) })",
             {{"x", tensor<int32_t>({4}, {1, -2, 3, 4})}, {"axis", Tensor::scalar<int32_t>(0)}});
  EXPECT_EQ(values(i), (std::vector<double>{1, -1, 2, 6}));
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[2,3] x, int64 axis) => (float[2,3] z) { z = CumSum(x, axis) })",
                          {{"x", x23()}, {"axis", Tensor::scalar<int64_t>(2)}});
  EXPECT_NE(err.find("out of range"), std::string::npos) << err;
}

TEST(ReduceOps, CumProd) {
  auto run = [](const std::string& attrs, int64_t axis) {
    return run_op(
        "<ir_version: 8, opset_import: [\"\" : 26]>\n"
        "g (float[2,3] x, int64 axis) => (float[2,3] z) { z = CumProd " +
            attrs + "(x, axis) }",
        {{"x", x23()}, {"axis", Tensor::scalar<int64_t>(axis)}});
  };
  expect_tensor_near(run("", 1), {2, 3}, {1, 2, 6, 4, 20, 120});
  expect_tensor_near(run("", -2), {2, 3}, {1, 2, 3, 4, 10, 18});
  expect_tensor_near(run("<exclusive = 1>", 1), {2, 3}, {1, 1, 2, 1, 4, 20});
  expect_tensor_near(run("<reverse = 1>", 1), {2, 3}, {6, 6, 3, 120, 30, 6});
  expect_tensor_near(run("<exclusive = 1, reverse = 1>", 1), {2, 3}, {6, 3, 1, 30, 6, 1});
  auto i =
      run_op(R"(<ir_version: 8, opset_import: ["" : 26]>
    g (int32[4] x, int32 axis) => (int32[4] z) { z = CumProd(x, axis) })",
             {{"x", tensor<int32_t>({4}, {1, -2, 3, 4})}, {"axis", Tensor::scalar<int32_t>(0)}});
  EXPECT_EQ(values(i), (std::vector<double>{1, -2, -6, -24}));
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 26]>
    g (float[2,3] x, int64 axis) => (float[2,3] z) { z = CumProd(x, axis) })",
                          {{"x", x23()}, {"axis", Tensor::scalar<int64_t>(-3)}});
  EXPECT_NE(err.find("out of range"), std::string::npos) << err;
}

TEST(ReduceOps, MaxAndMinOfBoolFromOpset20) {
  auto run = [](const std::string& op, std::vector<bool> x) {
    return run_op(
        "<ir_version: 8, opset_import: [\"\" : 20]>\n"
        "g (bool[2,3] x, int64[1] axes) => (bool z) { z = " +
            op + " <keepdims = 0> (x, axes) }",
        {{"x", tensor<bool>({2, 3}, std::move(x))}, {"axes", tensor<int64_t>({1}, {1})}});
  };
  auto any = run("ReduceMax", {true, false, false, false, false, false});
  ASSERT_EQ(any.dtype(), DType::kBool);
  EXPECT_EQ(values(any), (std::vector<double>{1, 0}));
  auto all = run("ReduceMin", {true, true, true, false, true, true});
  ASSERT_EQ(all.dtype(), DType::kBool);
  EXPECT_EQ(values(all), (std::vector<double>{1, 0}));
}

}  // namespace
}  // namespace onnxdbg::testing
