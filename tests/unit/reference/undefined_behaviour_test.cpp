// Hostile values that were undefined behaviour in C++ (issue 17 item 10, found by UBSan): a Range
// whose last element leaves its integer type, GridSample coordinates that are NaN, infinite or
// huge, and bool tensors whose bytes are neither 0 nor 1. Under `make test-sanitize` UBSan halts
// on any of them; here the values they now give are checked.
#include <cmath>
#include <limits>

#include "../test_util.h"
#include "model/model.h"

namespace onnxdbg {
namespace {

using testing::parse_text_model;
using testing::run_reference;
using testing::values;

TEST(UndefinedBehaviour, RangeWhoseLastElementLeavesInt64Wraps) {
  // start = INT64_MIN, limit = INT64_MAX, delta = 2^62: 4 elements; start + 3 * delta does not
  // fit int64 as an intermediate (3 * 2^62) but the element itself does.
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g () => (int64[N] y) {
      s = Constant<value = int64 {-9223372036854775808}>()
      l = Constant<value = int64 {9223372036854775807}>()
      d = Constant<value = int64 {4611686018427387904}>()
      y = Range(s, l, d)
    })");
  const auto out = run_reference(m, {});
  ASSERT_TRUE(out.count("y"));
  const Tensor& y = out.at("y");
  ASSERT_EQ(y.numel(), 4);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(y.data<int64_t>()[0], kMin);
  EXPECT_EQ(y.data<int64_t>()[1], kMin + 4611686018427387904LL);
  EXPECT_EQ(y.data<int64_t>()[2], 0);
  EXPECT_EQ(y.data<int64_t>()[3], 4611686018427387904LL);
}

TEST(UndefinedBehaviour, RangeWhoseLastElementLeavesInt32Wraps) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g () => (int32[N] y) {
      s = Constant<value = int32 {-2147483648}>()
      l = Constant<value = int32 {2147483647}>()
      d = Constant<value = int32 {1073741824}>()
      y = Range(s, l, d)
    })");
  const auto out = run_reference(m, {});
  ASSERT_TRUE(out.count("y"));
  EXPECT_EQ(values(out.at("y")),
            (std::vector<double>{-2147483648.0, -1073741824.0, 0, 1073741824.0}));
}

TEST(UndefinedBehaviour, GridSampleOnNanInfiniteAndHugeCoordinates) {
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* pad : {"zeros", "border", "reflection"}) {
      SCOPED_TRACE(std::string(mode) + " " + pad);
      auto m = parse_text_model(std::string(R"(
        <ir_version: 8, opset_import: ["" : 16]>
        g (float[1,1,2,2] x, float[1,1,3,2] grid) => (float[1,1,1,3] y) {
          y = GridSample<mode = ")") +
                                mode + R"(", padding_mode = ")" + pad +
                                R"(">(x, grid)
        })");
      const float inf = std::numeric_limits<float>::infinity();
      const auto out = run_reference(
          m, {{"x", Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4})},
              {"grid", Tensor::from_vector<float>({1, 1, 3, 2},
                                                  {std::nanf(""), 0.f, inf, -inf, 1e30f, 1e30f})}});
      ASSERT_TRUE(out.count("y"));
      const auto y = values(out.at("y"));
      EXPECT_TRUE(std::isnan(y[0])) << y[0];
      // Far outside the image: zero padding gives 0, border and reflection a pixel of x.
      for (size_t i = 1; i < 3; ++i) {
        if (std::string(pad) == "zeros") {
          EXPECT_EQ(y[i], 0.0) << i;
        } else {
          EXPECT_TRUE(std::isfinite(y[i])) << i << ": " << y[i];
        }
      }
    }
  }
}

TEST(UndefinedBehaviour, BoolInitializerBytesOtherThanZeroAndOneReadAsTrue) {
  onnx::TensorProto p;
  p.set_name("b");
  p.set_data_type(onnx::TensorProto::BOOL);
  p.add_dims(4);
  p.set_raw_data(std::string("\x00\x01\x02\xff", 4));
  auto t = tensor_from_proto(p, {});
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_EQ(values(*t), (std::vector<double>{0, 1, 1, 1}));

  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g () => (bool[4] y, bool[4] z) {
      y = Not(b)
      z = And(b, b)
    })");
  *m.mutable_graph()->add_initializer() = p;
  const auto out = run_reference(m, {});
  ASSERT_TRUE(out.count("y") && out.count("z"));
  EXPECT_EQ(values(out.at("y")), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(out.at("z")), (std::vector<double>{0, 1, 1, 1}));
}

}  // namespace
}  // namespace onnxdbg
