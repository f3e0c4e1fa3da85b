// The bulk float16 conversions (F16C where the CPU has it) against the portable Float16 code, and
// cast_tensor's typed loops against get_as_double/set_from_double.
#include "onnxdbg/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "onnxdbg/tensor.h"

namespace onnxdbg {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

template <class T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(Float16Bulk, EveryFloat16ToFloat32) {
  std::vector<uint16_t> in(65536);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(i);
  std::vector<float> out(in.size());
  float16_to_float(in.data(), out.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(bits_of(out[i]), bits_of(Float16::to_float(in[i]))) << "float16 bits " << i;
}

// Every rounding boundary: for each float16 value, the float32 midpoint to the next one and its
// neighbours (ties go to even), plus a sweep over the float32 bit patterns (NaNs, Inf, overflow,
// subnormals), in lengths that leave a scalar tail.
TEST(Float16Bulk, Float32ToFloat16MatchesPortable) {
  std::vector<float> in;
  for (uint32_t h = 0; h < 0x7c00u; ++h) {
    const float lo = Float16::to_float(static_cast<uint16_t>(h));
    const float hi = Float16::to_float(static_cast<uint16_t>(h + 1));
    const uint32_t mid = bits_of(static_cast<float>((static_cast<double>(lo) + hi) / 2));
    for (uint32_t d = 0; d < 5; ++d) {
      in.push_back(from_bits(mid - 2 + d));
      in.push_back(-from_bits(mid - 2 + d));
    }
  }
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 65521) in.push_back(from_bits(uint32_t(u)));
  for (uint32_t u : {0x7f800000u, 0xff800000u, 0x7fc00001u, 0x7f800001u, 0xffbfffffu, 0x477fefffu,
                     0x477ff000u, 0x33000000u, 0x33000001u, 0x387fffffu, 0x38800000u})
    in.push_back(from_bits(u));
  in.push_back(1.0f);  // odd length: a scalar tail
  std::vector<uint16_t> out(in.size());
  float_to_float16(in.data(), out.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(out[i], Float16::from_float(in[i]))
        << "float32 bits 0x" << std::hex << bits_of(in[i]);
}

// cast_tensor's typed loop gives what the element-by-element path through double gives: NaN to 0,
// saturation at the integer type's bounds, truncation toward zero, bool as != 0.
TEST(CastTensor, TypedLoopsKeepTheDoublePathsResults) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor f = Tensor::from_vector<float>({7}, {1.9f, -1.9f, 300.0f, -300.0f, nan, 0.0f, 65536.5f});
  auto i8 = cast_tensor(f, DType::kInt8);
  ASSERT_TRUE(i8.has_value());
  EXPECT_EQ(values<int8_t>(*i8), (std::vector<int8_t>{1, -1, 127, -128, 0, 0, 127}));
  auto u16 = cast_tensor(f, DType::kUint16);
  ASSERT_TRUE(u16.has_value());
  EXPECT_EQ(values<uint16_t>(*u16), (std::vector<uint16_t>{1, 0, 300, 0, 0, 0, 65535}));
  auto b = cast_tensor(f, DType::kBool);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(values<bool>(*b), (std::vector<bool>{true, true, true, true, true, false, true}));

  Tensor i32 = Tensor::from_vector<int32_t>({4}, {16777217, -5, 2147483647, -2147483647 - 1});
  auto as_float = cast_tensor(i32, DType::kFloat);
  ASSERT_TRUE(as_float.has_value());
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(as_float->data<float>()[i],
              static_cast<float>(static_cast<double>(i32.data<int32_t>()[i])));
  auto as_u8 = cast_tensor(i32, DType::kUint8);
  ASSERT_TRUE(as_u8.has_value());
  EXPECT_EQ(values<uint8_t>(*as_u8), (std::vector<uint8_t>{255, 0, 255, 0}));
  auto as_u32 = cast_tensor(Tensor::from_vector<int8_t>({2}, {-3, 7}), DType::kUint32);
  ASSERT_TRUE(as_u32.has_value());
  EXPECT_EQ(values<uint32_t>(*as_u32), (std::vector<uint32_t>{0, 7}));
  auto as_i64 = cast_tensor(Tensor::from_vector<double>({2}, {1e300, -2.5}), DType::kInt64);
  ASSERT_TRUE(as_i64.has_value());
  EXPECT_EQ(values<int64_t>(*as_i64),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(), -2}));

  Tensor h(DType::kFloat16, {3});
  const uint16_t hb[3] = {0x3c00, 0x7e00, 0x0001};
  std::memcpy(h.raw(), hb, sizeof hb);
  auto h32 = cast_tensor(h, DType::kFloat);
  ASSERT_TRUE(h32.has_value());
  EXPECT_EQ(h32->data<float>()[0], 1.0f);
  EXPECT_TRUE(std::isnan(h32->data<float>()[1]));
  EXPECT_EQ(h32->data<float>()[2], std::ldexp(1.0f, -24));
}

// A float64 just above the midpoint between two float16 values rounds up, though the float32
// nearest it is the midpoint itself (which would round to even, down): cast_tensor and
// set_from_double round a float64 once (round to odd through float32), not twice.
TEST(CastTensor, Float64ToFloat16AndBFloat16RoundOnce) {
  const double above_half = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  const double below_half = 1.0 + std::ldexp(1.0, -11) - std::ldexp(1.0, -40);
  Tensor d = Tensor::from_vector<double>({2}, {above_half, below_half});
  auto h = cast_tensor(d, DType::kFloat16);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->data<Float16>()[0].bits, 0x3c01);  // 1 + 2^-10
  EXPECT_EQ(h->data<Float16>()[1].bits, 0x3c00);  // 1
  Tensor one(DType::kFloat16, {1});
  one.set_from_double(0, above_half);
  EXPECT_EQ(one.data<Float16>()[0].bits, 0x3c01);
  // Across cast_tensor's blocks (1,024 elements), each element as set_from_double rounds it.
  std::vector<double> many(2500);
  for (size_t i = 0; i < many.size(); ++i)
    many[i] = (static_cast<double>(i) - 1250.0) * 0.0137 + std::ldexp(1.0, -40) * (i % 3);
  auto bulk = cast_tensor(Tensor::from_vector<double>({2500}, many), DType::kFloat16);
  ASSERT_TRUE(bulk.has_value());
  for (int64_t i = 0; i < 2500; ++i) {
    one.set_from_double(0, many[static_cast<size_t>(i)]);
    ASSERT_EQ(bulk->data<Float16>()[i].bits, one.data<Float16>()[0].bits) << i;
  }
  const double bf_above = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  auto b = cast_tensor(Tensor::from_vector<double>({1}, {bf_above}), DType::kBFloat16);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->data<BFloat16>()[0].bits, 0x3f81);  // 1 + 2^-7
}

}  // namespace
}  // namespace onnxdbg
