// Slice, Gather, GatherElements, GatherND, ScatterElements, ScatterND, TensorScatter and Compress
// on the reference interpreter, with hand-computed values and error messages.
#include "../../test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::iota;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;

TEST(SliceGather, SliceNegativeSteps) {
  // starts -1 (= 9), ends past the front (clamped to -1), step -3: 9, 6, 3, 0.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[10] x) => (float[4] y) {
      starts = Constant<value = int64[1] {-1}>()
      ends = Constant<value = int64[1] {-1000}>()
      axes = Constant<value = int64[1] {0}>()
      steps = Constant<value = int64[1] {-3}>()
      y = Slice(x, starts, ends, axes, steps)
    })");
  auto out = run_reference(m, {{"x", iota({10})}});
  expect_tensor_near(out["y"], {4}, {9, 6, 3, 0});
}

TEST(SliceGather, SliceNegativeStep2DAndClamping) {
  // Axis 1 reversed from 100 (clamped to 3) down to (not including) 0; axis 0 from 1 to the end.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3,4] x) => (float[2,3] y) {
      starts = Constant<value = int64[2] {100, 1}>()
      ends = Constant<value = int64[2] {0, 9223372036854775807}>()
      axes = Constant<value = int64[2] {-1, 0}>()
      steps = Constant<value = int64[2] {-1, 1}>()
      y = Slice(x, starts, ends, axes, steps)
    })");
  auto out = run_reference(m, {{"x", iota({3, 4})}});
  expect_tensor_near(out["y"], {2, 3}, {7, 6, 5, 11, 10, 9});
}

TEST(SliceGather, SliceOpset1Attributes) {
  auto m = parse_text_model(R"(
    <ir_version: 3, opset_import: ["" : 1]>
    g (float[3,4] x) => (float[2,2] y) {
      y = Slice<starts = [1, 1], ends = [3, -1], axes = [0, 1]>(x)
    })");
  auto out = run_reference(m, {{"x", iota({3, 4})}});
  expect_tensor_near(out["y"], {2, 2}, {5, 6, 9, 10});
}

TEST(SliceGather, SliceZeroStepIsAnError) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x) => (float[4] y) {
      starts = Constant<value = int64[1] {0}>()
      ends = Constant<value = int64[1] {4}>()
      axes = Constant<value = int64[1] {0}>()
      steps = Constant<value = int64[1] {0}>()
      y = Slice(x, starts, ends, axes, steps)
    })");
  const std::string err = run_reference_error(m, {{"x", iota({4})}});
  EXPECT_NE(err.find("step"), std::string::npos) << err;
}

TEST(SliceGather, GatherAxis1NegativeIndices) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float[2,2,2] y) {
      idx = Constant<value = int64[2,2] {0, -1, 1, 1}>()
      y = Gather<axis = 1>(x, idx)
    })");
  auto out = run_reference(m, {{"x", iota({2, 3})}});
  expect_tensor_near(out["y"], {2, 2, 2}, {0, 2, 1, 1, 3, 5, 4, 4});
}

TEST(SliceGather, GatherStrings) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (string[3] x) => (string[2] y) {
      idx = Constant<value = int32[2] {2, 0}>()
      y = Gather(x, idx)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<std::string>({3}, {"a", "b", "c"})}});
  ASSERT_EQ(out["y"].numel(), 2);
  EXPECT_EQ(out["y"].strings()[0], "c");
  EXPECT_EQ(out["y"].strings()[1], "a");
}

TEST(SliceGather, GatherIndexOutOfRangeNamesIndex) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3] x) => (float[2] y) {
      idx = Constant<value = int64[2] {1, 7}>()
      y = Gather(x, idx)
    })");
  const std::string err = run_reference_error(m, {{"x", iota({3})}});
  EXPECT_NE(err.find("index 7"), std::string::npos) << err;
  EXPECT_NE(err.find("size 3"), std::string::npos) << err;
}

TEST(SliceGather, GatherElementsAxis1) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,2] x) => (float[2,2] y) {
      idx = Constant<value = int64[2,2] {0, 0, 1, 0}>()
      y = GatherElements<axis = 1>(x, idx)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}});
  expect_tensor_near(out["y"], {2, 2}, {1, 1, 4, 3});
}

TEST(SliceGather, GatherNDBatchDims) {
  // batch_dims 1: batch 0 picks row 1 of data[0], batch 1 picks row 0 of data[1].
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,2,2] x) => (float[2,2] y) {
      idx = Constant<value = int64[2,1] {1, 0}>()
      y = GatherND<batch_dims = 1>(x, idx)
    })");
  auto out = run_reference(m, {{"x", iota({2, 2, 2})}});
  expect_tensor_near(out["y"], {2, 2}, {2, 3, 4, 5});
}

TEST(SliceGather, ScatterElementsAddReduction) {
  // Duplicate index 1 accumulates both updates.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[1,5] x) => (float[1,5] y) {
      idx = Constant<value = int64[1,3] {1, 1, -1}>()
      upd = Constant<value = float[1,3] {1.5, 2.0, 10.0}>()
      y = ScatterElements<axis = 1, reduction = "add">(x, idx, upd)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({1, 5}, {1, 2, 3, 4, 5})}});
  expect_tensor_near(out["y"], {1, 5}, {1, 5.5, 3, 4, 15});
}

TEST(SliceGather, ScatterND) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3,2] x) => (float[3,2] y) {
      idx = Constant<value = int64[2,1] {2, 0}>()
      upd = Constant<value = float[2,2] {7, 8, 9, 10}>()
      y = ScatterND(x, idx, upd)
    })");
  auto out = run_reference(m, {{"x", iota({3, 2})}});
  expect_tensor_near(out["y"], {3, 2}, {9, 10, 2, 3, 7, 8});
}

TEST(SliceGather, Compress) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (float[3,2] x) => (float[2,2] y, float[2] f) {
      c = Constant<value = bool[3] {1, 0, 1}>()
      c2 = Constant<value = bool[4] {0, 1, 0, 1}>()
      y = Compress<axis = 0>(x, c)
      f = Compress(x, c2)
    })");
  auto out = run_reference(m, {{"x", iota({3, 2})}});
  expect_tensor_near(out["y"], {2, 2}, {0, 1, 4, 5});
  expect_tensor_near(out["f"], {2}, {1, 3});
}

TEST(SliceGather, TensorScatterLinearAndCircular) {
  // past [1, 4, 2] holds 0..7; the update's 2 rows go to sequence positions 1 and 2 (linear) or
  // 3 and 0 (circular, write index 3).
  auto run = [](const std::string& mode, int64_t at) {
    auto m = parse_text_model(R"(<ir_version: 8, opset_import: ["" : 24]>
      g (float[1,4,2] past, float[1,2,2] upd, int64[1] at) => (float[1,4,2] y) {
        y = TensorScatter<mode = ")" +
                              mode + R"(">(past, upd, at)
      })");
    Tensor past(DType::kFloat, {1, 4, 2});
    for (int64_t i = 0; i < 8; ++i) past.data<float>()[i] = static_cast<float>(i);
    return std::make_pair(m, std::map<std::string, Tensor>{
                                 {"past", past},
                                 {"upd", Tensor::from_vector<float>({1, 2, 2}, {10, 11, 12, 13})},
                                 {"at", Tensor::from_vector<int64_t>({1}, {at})}});
  };
  auto [lin, lin_in] = run("linear", 1);
  expect_tensor_near(run_reference(lin, lin_in)["y"], {1, 4, 2}, {0, 1, 10, 11, 12, 13, 6, 7});
  auto [circ, circ_in] = run("circular", 3);
  expect_tensor_near(run_reference(circ, circ_in)["y"], {1, 4, 2}, {12, 13, 2, 3, 4, 5, 10, 11});
  auto [bad, bad_in] = run("linear", 3);
  auto err = run_reference_error(bad, bad_in);
  EXPECT_NE(err.find("write index 3 of batch sample 0 does not fit 2 positions"), std::string::npos)
      << err;
}

}  // namespace
}  // namespace onnxdbg
