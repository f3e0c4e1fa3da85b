// Element types of ONNX tensors (values equal onnx::TensorProto_DataType, ONNX IR spec
// "Tensor Element Types"), their sizes and names, and the 16-bit float types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "onnxdbg/status.h"

namespace onnxdbg {

/// ONNX tensor element type. The numeric values are those of onnx.proto's TensorProto.DataType.
enum class DType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  // The narrow types (onnx.proto TensorProto.DataType 17-28). In a Tensor each element takes one
  // byte holding its code in the low bits, as ml_dtypes lays them out in numpy; files and
  // TensorProtos pack the 4-, 2- and 6-bit ones (see onnxdbg/narrow_types.h).
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
  kFloat6E2M3 = 27,
  kFloat6E3M2 = 28,
};

/// The largest DType value (TensorProto.DataType) onnxdbg knows.
inline constexpr int32_t kMaxDType = 28;

/// Size in bytes of one element in memory; 0 for kUndefined and kString (strings are stored
/// apart). 1 for every narrow type, including the packed 4-, 2- and 6-bit ones (their size in a
/// file is dtype_storage_bytes).
size_t dtype_size(DType t);
/// numpy-style lower-case name: "float32", "float16", "int64", "bool", "string", ...; the narrow
/// types take ml_dtypes' names ("float8_e4m3fn", "float8_e8m0fnu", "float4_e2m1fn", "int4", ...),
/// so that numpy with ml_dtypes imported reads them (np.dtype("int4")).
std::string_view dtype_name(DType t);
/// Parses a name produced by dtype_name (also accepts ONNX's "float", "double", and the
/// TensorProto.DataType names in any case: "FLOAT8E4M3FN", "int4", "uint2").
/// Errors: kInvalidArgument for an unknown name.
Expected<DType> dtype_from_name(std::string_view name);
/// True for float16, bfloat16, float32 and float64: the types kernels compute in. The narrow
/// float types are not included (see is_narrow_float).
bool is_floating(DType t);
/// True for the signed and unsigned integer types of 8 bits or more (not bool, not int4/int2).
bool is_integer(DType t);
/// True for the float8 (4 kinds), float8e8m0, float4e2m1 and float6 types.
bool is_narrow_float(DType t);
/// True for int4, uint4, int2 and uint2.
bool is_narrow_integer(DType t);
/// Bits per element as stored in a file: 4 (int4, uint4, float4e2m1), 2 (int2, uint2), 6 (the
/// float6 types), 8 otherwise for one-byte types; 8 * dtype_size for the others.
int dtype_bits(DType t);
/// Bytes that `numel` elements of `t` take in a TensorProto's raw_data, external data or a packed
/// buffer (ONNX IR "Tensor Element Types": sub-byte elements packed from the least significant
/// bit, the last byte padded with zero bits). Errors: kInvalidArgument when it overflows.
Expected<size_t> dtype_storage_bytes(DType t, int64_t numel);
/// Converts an int32 from a protobuf field to DType (0 to kMaxDType). Errors: kModelError for
/// values outside the enum.
Expected<DType> dtype_from_onnx(int32_t v);

/// IEEE 754 binary16, stored as its bit pattern. Conversions round to nearest even, NaNs quiet.
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }
  static uint16_t from_float(float f);
  static float to_float(uint16_t h);
};

/// Converts `n` float16 bit patterns to float32, exactly (every float16 is a float32), with the
/// CPU's F16C instructions where it has them; the result is bit-identical to Float16::to_float.
void float16_to_float(const uint16_t* in, float* out, size_t n);
/// Converts `n` float32 values to float16 bit patterns, rounding to nearest even (IEEE 754
/// convertFormat; overflow to Inf, NaN stays a quiet NaN), with F16C where the CPU has it; the
/// result is bit-identical to Float16::from_float.
void float_to_float16(const float* in, uint16_t* out, size_t n);

/// bfloat16 (the upper half of a float32), stored as its bit pattern. Conversion from float32
/// rounds to nearest even and keeps NaN a NaN.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(from_float(f)) {}
  explicit operator float() const {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
  }
};

/// Maps a C++ element type to its DType (compile time).
template <class T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kDouble;
};
template <>
struct DTypeOf<Float16> {
  static constexpr DType value = DType::kFloat16;
};
template <>
struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::kBFloat16;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::kInt16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUint8;
};
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::kUint16;
};
template <>
struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::kUint32;
};
template <>
struct DTypeOf<uint64_t> {
  static constexpr DType value = DType::kUint64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
template <>
struct DTypeOf<std::string> {
  static constexpr DType value = DType::kString;
};

}  // namespace onnxdbg
