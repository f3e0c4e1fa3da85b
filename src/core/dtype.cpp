// DType tables and IEEE binary16 conversion (round to nearest even, subnormals, Inf/NaN kept).
#include "onnxdbg/dtype.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <array>
#include <cctype>

namespace onnxdbg {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat:
    case DType::kInt32:
    case DType::kUint32:
      return 4;
    case DType::kUint8:
    case DType::kInt8:
    case DType::kBool:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUint4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kUint2:
    case DType::kInt2:
    case DType::kFloat6E2M3:
    case DType::kFloat6E3M2:
      return 1;
    case DType::kUint16:
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt64:
    case DType::kDouble:
    case DType::kUint64:
    case DType::kComplex64:
      return 8;
    case DType::kComplex128:
      return 16;
    default:
      return 0;
  }
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kFloat:
      return "float32";
    case DType::kUint8:
      return "uint8";
    case DType::kInt8:
      return "int8";
    case DType::kUint16:
      return "uint16";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kString:
      return "string";
    case DType::kBool:
      return "bool";
    case DType::kFloat16:
      return "float16";
    case DType::kDouble:
      return "float64";
    case DType::kUint32:
      return "uint32";
    case DType::kUint64:
      return "uint64";
    case DType::kComplex64:
      return "complex64";
    case DType::kComplex128:
      return "complex128";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat8E4M3FN:
      return "float8_e4m3fn";
    case DType::kFloat8E4M3FNUZ:
      return "float8_e4m3fnuz";
    case DType::kFloat8E5M2:
      return "float8_e5m2";
    case DType::kFloat8E5M2FNUZ:
      return "float8_e5m2fnuz";
    case DType::kUint4:
      return "uint4";
    case DType::kInt4:
      return "int4";
    case DType::kFloat4E2M1:
      return "float4_e2m1fn";
    case DType::kFloat8E8M0:
      return "float8_e8m0fnu";
    case DType::kUint2:
      return "uint2";
    case DType::kInt2:
      return "int2";
    case DType::kFloat6E2M3:
      return "float6_e2m3fn";
    case DType::kFloat6E3M2:
      return "float6_e3m2fn";
    default:
      return "undefined";
  }
}

Expected<DType> dtype_from_name(std::string_view name) {
  if (name == "float") return DType::kFloat;
  if (name == "double") return DType::kDouble;
  for (int i = 1; i <= kMaxDType; ++i) {
    if (dtype_name(static_cast<DType>(i)) == name) return static_cast<DType>(i);
  }
  // TensorProto.DataType's own names, in any case ("FLOAT8E4M3FN", "float8e5m2").
  static constexpr std::array<std::string_view, kMaxDType + 1> kOnnxNames = {
      "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",    "INT16",
      "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",   "DOUBLE",
      "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16",  "FLOAT8E4M3FN",
      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",      "FLOAT4E2M1",
      "FLOAT8E8M0",     "UINT2",      "INT2",           "FLOAT6E2M3", "FLOAT6E3M2"};
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (int i = 1; i <= kMaxDType; ++i)
    if (kOnnxNames[static_cast<size_t>(i)] == upper) return static_cast<DType>(i);
  return invalid_argument("unknown element type '" + std::string(name) +
                          "' (expected float32, float16, int64, bool, float8_e4m3fn, int4, ...)");
}

bool is_floating(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBFloat16;
}

bool is_integer(DType t) {
  switch (t) {
    case DType::kUint8:
    case DType::kInt8:
    case DType::kUint16:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUint32:
    case DType::kUint64:
      return true;
    default:
      return false;
  }
}

bool is_narrow_float(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kFloat6E2M3:
    case DType::kFloat6E3M2:
      return true;
    default:
      return false;
  }
}

bool is_narrow_integer(DType t) {
  return t == DType::kInt4 || t == DType::kUint4 || t == DType::kInt2 || t == DType::kUint2;
}

int dtype_bits(DType t) {
  switch (t) {
    case DType::kInt4:
    case DType::kUint4:
    case DType::kFloat4E2M1:
      return 4;
    case DType::kInt2:
    case DType::kUint2:
      return 2;
    case DType::kFloat6E2M3:
    case DType::kFloat6E3M2:
      return 6;
    default:
      return static_cast<int>(8 * dtype_size(t));
  }
}

Expected<size_t> dtype_storage_bytes(DType t, int64_t numel) {
  const auto bits = static_cast<uint64_t>(dtype_bits(t));
  if (numel < 0 || (bits && static_cast<uint64_t>(numel) > UINT64_MAX / bits / 2))
    return invalid_argument(std::to_string(numel) + " elements of " + std::string(dtype_name(t)) +
                            " do not fit in memory");
  return static_cast<size_t>((static_cast<uint64_t>(numel) * bits + 7) / 8);
}

Expected<DType> dtype_from_onnx(int32_t v) {
  if (v < 0 || v > kMaxDType)
    return model_error("unknown tensor element type " + std::to_string(v) +
                       " (TensorProto.DataType; ONNX 1.23 defines 1 to " +
                       std::to_string(kMaxDType) + ")");
  return static_cast<DType>(v);
}

uint16_t Float16::from_float(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow rounds to Inf
  if (abs < 0x38800000u) {                                      // result is subnormal or zero
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    // value = mant * 2^(exp-150) and the subnormal unit is 2^-24, so r = mant >> (126 - exp).
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t s = 126 - exp;
    uint32_t r = mant >> s;
    const uint32_t rem = mant & ((1u << s) - 1);
    const uint32_t halfway = 1u << (s - 1);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

float Float16::to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t out;
  if (exp == 0x1f) {  // Inf, or a NaN made quiet (IEEE 754 6.2), as F16C's VCVTPH2PS does
    out = sign | 0x7f800000u | (mant << 13) | (mant != 0 ? 0x400000u : 0u);
  } else if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      out = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | ((mant & 0x3ffu) << 13);
    }
  } else {
    out = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ONNXDBG_HAVE_F16C_PATH 1
// VCVTPH2PS / VCVTPS2PH (immediate 0: round to nearest even, whatever MXCSR says) convert as the
// portable code does, NaN payloads and subnormals included; the unit test checks every float16 and
// a sweep of float32 bit patterns against it.
__attribute__((target("avx,f16c"))) void float16_to_float_f16c(const uint16_t* in, float* out,
                                                               size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = Float16::to_float(in[i]);
}

__attribute__((target("avx,f16c"))) void float_to_float16_f16c(const float* in, uint16_t* out,
                                                               size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), 0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = Float16::from_float(in[i]);
}

// AVX with the operating system's support ("avx"), and F16C from CPUID leaf 1 (ECX bit 29): clang
// has no "f16c" name for __builtin_cpu_supports, so both compilers read the bit.
bool cpu_has_f16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
           (ecx & bit_F16C) != 0;
  }();
  return has;
}
#endif

}  // namespace

void float16_to_float(const uint16_t* in, float* out, size_t n) {
#ifdef ONNXDBG_HAVE_F16C_PATH
  if (cpu_has_f16c()) return float16_to_float_f16c(in, out, n);
#endif
  for (size_t i = 0; i < n; ++i) out[i] = Float16::to_float(in[i]);
}

void float_to_float16(const float* in, uint16_t* out, size_t n) {
#ifdef ONNXDBG_HAVE_F16C_PATH
  if (cpu_has_f16c()) return float_to_float16_f16c(in, out, n);
#endif
  for (size_t i = 0; i < n; ++i) out[i] = Float16::from_float(in[i]);
}

}  // namespace onnxdbg
