// The layerwise module's private pieces on their own: batches under the byte and extra-output
// limits, the bytes a tensor copy takes, the float scan of golden values, and the constants the
// isolated nodes get as initializers.
#include "layerwise/batching.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "layerwise/layer_tensors.h"
#include "layerwise/node_models.h"

namespace onnxdbg::layerwise_detail {
namespace {

std::vector<LayerTensor> sized(const std::vector<uint64_t>& bytes) {
  std::vector<LayerTensor> ts;
  for (size_t i = 0; i < bytes.size(); ++i) {
    LayerTensor t;
    t.name = "t" + std::to_string(i);
    t.node_index = i;
    t.bytes = bytes[i];
    ts.push_back(t);
  }
  return ts;
}

// Batches are consecutive, cover every tensor once, and respect both limits.
void expect_covering(const std::vector<Batch>& bs, const std::vector<LayerTensor>& ts,
                     uint64_t max_bytes, size_t max_tensors) {
  size_t next = 0;
  for (const auto& b : bs) {
    EXPECT_EQ(b.begin, next);
    EXPECT_GT(b.end, b.begin);
    EXPECT_LE(b.end - b.begin, max_tensors);
    uint64_t sum = 0;
    for (size_t i = b.begin; i < b.end; ++i) sum += ts[i].bytes;
    EXPECT_EQ(b.bytes, sum);
    EXPECT_LE(b.bytes, max_bytes);
    next = b.end;
  }
  EXPECT_EQ(next, ts.size());
}

TEST(LayerwiseBatching, GreedyFillsEachBatchUpToTheLimits) {
  const auto ts = sized({40, 40, 40, 10, 10, 90});
  const auto bs = greedy_batches(ts, 100, 100);
  ASSERT_EQ(bs.size(), 3u);
  EXPECT_EQ(bs[0].end, 2u);  // 80 + 40 > 100
  EXPECT_EQ(bs[1].end, 5u);  // 40 + 10 + 10
  EXPECT_EQ(bs[2].bytes, 90u);
  expect_covering(bs, ts, 100, 100);
  EXPECT_EQ(greedy_batches(ts, 1000, 2).size(), 3u);  // the tensor cap alone
}

TEST(LayerwiseBatching, EvenBatchesAreAsFewAsGreedyAndSmaller) {
  // Greedy under 80 bytes: 8 tensors then 2; the same two batches hold 5 and 5.
  const auto ts = sized(std::vector<uint64_t>(10, 10));
  const auto fewest = greedy_batches(ts, 80, 100);
  ASSERT_EQ(fewest.size(), 2u);
  EXPECT_EQ(fewest[0].bytes, 80u);
  const auto even = make_batches(ts, 80, 100);
  expect_covering(even, ts, 80, 100);
  ASSERT_EQ(even.size(), 2u);
  EXPECT_EQ(even[0].bytes, 50u);
  EXPECT_EQ(even[1].bytes, 50u);
  EXPECT_TRUE(make_batches({}, 100, 100).empty());
  EXPECT_EQ(batch_names(ts, even[1]).front(), "t5");
}

TEST(LayerwiseTensors, BytesRoundLargeBuffersToHugePages) {
  EXPECT_EQ(tensor_bytes(Tensor(DType::kFloat, {4})), 16u);
  const uint64_t huge = uint64_t{2} << 20;
  EXPECT_EQ(tensor_bytes(Tensor(DType::kFloat, {int64_t(huge / 4 + 1)})), 2 * huge);
}

TEST(LayerwiseTensors, ScanFloatsCountsNonFiniteAndFindsTheLargestMagnitude) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v = {1, -7.5f, NAN, 3, inf, -inf, 2, 0.5f, -9};  // tail past 4 lanes
  const FloatScan s = scan_floats(v.data(), static_cast<int64_t>(v.size()));
  EXPECT_EQ(s.nonfinite, 3);
  EXPECT_EQ(s.max_abs, 9.0f);
}

TEST(LayerwiseNodeModels, TakeConstantsMovesOutConstantOutputsNotGivenAsInputs) {
  TensorMap golden = {{"c", Tensor::scalar<float>(1)},
                      {"x", Tensor::scalar<float>(2)},
                      {"c_in", Tensor::scalar<float>(3)}};
  const TensorMap inputs = {{"c_in", Tensor::scalar<float>(3)}};
  const TensorMap constants = take_constants(golden, {"c", "c_in"}, inputs);
  EXPECT_EQ(constants.size(), 1u);
  EXPECT_TRUE(constants.count("c"));
  EXPECT_EQ(golden.size(), 2u);
  EXPECT_FALSE(golden.count("c"));
}

}  // namespace
}  // namespace onnxdbg::layerwise_detail
