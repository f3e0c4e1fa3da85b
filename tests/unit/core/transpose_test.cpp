// transpose_axes against a naive index computation (numpy.transpose's definition) for every
// permutation of ranks 1-4 and element sizes 1, 2, 4, 8 and 16 bytes and strings; empty and
// rank-0 tensors; a perm that is not one refused.
#include "core/transpose.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstring>

namespace onnxdbg {
namespace {

/// The flat index of `idx` in a row-major tensor of `shape`.
int64_t flat(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t f = 0;
  for (size_t i = 0; i < shape.size(); ++i) f = f * shape[i] + idx[i];
  return f;
}

/// Checks every element of transpose_axes(x, perm) against x at the permuted index (bytes
/// compared; strings compared as strings).
void expect_transposed(const Tensor& x, const std::vector<int64_t>& perm) {
  auto out = transpose_axes(x, perm);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  const size_t r = perm.size();
  ASSERT_EQ(out->shape().size(), r);
  for (size_t i = 0; i < r; ++i) EXPECT_EQ(out->shape()[i], x.shape()[perm[i]]);
  ASSERT_EQ(out->dtype(), x.dtype());
  const size_t es = x.dtype() == DType::kString ? 0 : dtype_size(x.dtype());
  std::vector<int64_t> idx(r, 0), src(r, 0);
  for (int64_t o = 0; o < out->numel(); ++o) {
    for (size_t i = 0; i < r; ++i) src[perm[i]] = idx[i];
    const int64_t s = flat(src, x.shape());
    if (es == 0)
      EXPECT_EQ(out->strings()[o], x.strings()[s]) << o;
    else
      EXPECT_EQ(std::memcmp(out->raw() + o * es, x.raw() + s * es, es), 0) << o;
    for (size_t k = r; k-- > 0;)
      if (++idx[k] < out->shape()[k])
        break;
      else
        idx[k] = 0;
  }
}

/// A tensor of `shape` whose elements' bytes all differ (element i holds bytes i*es + b).
Tensor distinct(DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  if (dtype == DType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) t.strings()[i] = "s" + std::to_string(i);
    return t;
  }
  for (size_t b = 0; b < t.nbytes(); ++b) t.raw()[b] = static_cast<std::byte>(b * 7 + b / 251);
  return t;
}

TEST(Transpose, EveryPermutationOfEveryRankAndElementSize) {
  const std::vector<Shape> shapes = {{5}, {2, 3}, {2, 3, 4}, {2, 3, 1, 5}};
  for (DType dt : {DType::kUint8, DType::kFloat16, DType::kFloat, DType::kInt64, DType::kComplex128,
                   DType::kString})
    for (const Shape& shape : shapes) {
      const Tensor x = distinct(dt, shape);
      std::vector<int64_t> perm(shape.size());
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
      do {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " " + shape_to_string(shape));
        expect_transposed(x, perm);
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
}

TEST(Transpose, NhwcToNchwMovesChannelsAhead) {
  // x[n,h,w,c] = 100*h + 10*w + c; out[n,c,h,w] must hold the same value.
  std::vector<float> v;
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 3; ++w)
      for (int c = 0; c < 4; ++c) v.push_back(static_cast<float>(100 * h + 10 * w + c));
  auto out = transpose_axes(Tensor::from_vector<float>({1, 2, 3, 4}, v), {0, 3, 1, 2});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(out->shape(), (Shape{1, 4, 2, 3}));
  const float* p = out->data<float>();
  for (int c = 0; c < 4; ++c)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 3; ++w)
        EXPECT_EQ(p[(c * 2 + h) * 3 + w], static_cast<float>(100 * h + 10 * w + c));
}

TEST(Transpose, EmptyAndScalarTensors) {
  auto empty = transpose_axes(Tensor(DType::kFloat, {2, 0, 3}), {2, 0, 1});
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->shape(), (Shape{3, 2, 0}));
  EXPECT_EQ(empty->numel(), 0);
  auto scalar = transpose_axes(Tensor::scalar<int32_t>(7), {});
  ASSERT_TRUE(scalar.has_value());
  EXPECT_EQ(scalar->data<int32_t>()[0], 7);
}

TEST(Transpose, RefusesWhatIsNoPermutation) {
  const Tensor x(DType::kFloat, {2, 3});
  for (const std::vector<int64_t>& bad :
       {std::vector<int64_t>{0}, std::vector<int64_t>{0, 0}, std::vector<int64_t>{0, 2}}) {
    auto r = transpose_axes(x, bad);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("is not a permutation of the axes of a tensor of shape "
                                        "2x3"),
              std::string::npos)
        << r.status().message();
  }
  EXPECT_TRUE(is_axis_permutation({1, 0}, 2));
  EXPECT_FALSE(is_axis_permutation({1, -1}, 2));
}

}  // namespace
}  // namespace onnxdbg
