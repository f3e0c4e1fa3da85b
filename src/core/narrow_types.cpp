// Narrow element types: one description per minifloat format, from which decoding (a table of
// every code's value) and encoding (a search of the ordered positive codes, round to nearest
// even) both follow, so that no format has hand-written bit tricks of its own.
#include "onnxdbg/narrow_types.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace onnxdbg {
namespace {

// Where a format keeps its NaN (and infinity).
enum class Special {
  kNone,     // no NaN, no infinity: float4e2m1, float6
  kAllOnes,  // S.1111.111 is NaN, no infinity: float8e4m3fn
  kNegZero,  // 0x80 (the negative zero's code) is the only NaN, no infinity: the FNUZ kinds
  kIeee754,  // exponent all ones: infinity (mantissa 0) or NaN: float8e5m2
};

struct MiniFloat {
  int exp_bits, man_bits, bias;
  Special special;
  uint8_t nan_code;  // the NaN a conversion produces (without its sign)
};

// ONNX IR spec "Tensor Element Types" and the Cast operator spec.
const MiniFloat* minifloat(DType t) {
  static constexpr MiniFloat kE4M3FN{4, 3, 7, Special::kAllOnes, 0x7F};
  static constexpr MiniFloat kE4M3FNUZ{4, 3, 8, Special::kNegZero, 0x80};
  static constexpr MiniFloat kE5M2{5, 2, 15, Special::kIeee754, 0x7E};
  static constexpr MiniFloat kE5M2FNUZ{5, 2, 16, Special::kNegZero, 0x80};
  static constexpr MiniFloat kE2M1{2, 1, 1, Special::kNone, 0};
  static constexpr MiniFloat kE2M3{2, 3, 1, Special::kNone, 0};
  static constexpr MiniFloat kE3M2{3, 2, 3, Special::kNone, 0};
  switch (t) {
    case DType::kFloat8E4M3FN:
      return &kE4M3FN;
    case DType::kFloat8E4M3FNUZ:
      return &kE4M3FNUZ;
    case DType::kFloat8E5M2:
      return &kE5M2;
    case DType::kFloat8E5M2FNUZ:
      return &kE5M2FNUZ;
    case DType::kFloat4E2M1:
      return &kE2M1;
    case DType::kFloat6E2M3:
      return &kE2M3;
    case DType::kFloat6E3M2:
      return &kE3M2;
    default:
      return nullptr;
  }
}

uint32_t sign_bit(const MiniFloat& f) { return 1u << (f.exp_bits + f.man_bits); }

double decode(const MiniFloat& f, uint32_t code) {
  const uint32_t sb = sign_bit(f);
  const uint32_t mag = code & (sb - 1);
  const bool neg = (code & sb) != 0;
  const uint32_t exp = mag >> f.man_bits;
  const uint32_t man = mag & ((1u << f.man_bits) - 1);
  const uint32_t exp_max = (1u << f.exp_bits) - 1;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (f.special == Special::kNegZero && neg && mag == 0) return kNaN;
  if (f.special == Special::kAllOnes && mag == sb - 1) return kNaN;
  if (f.special == Special::kIeee754 && exp == exp_max)
    return man ? kNaN : (neg ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
  const double v =
      exp == 0 ? std::ldexp(man, 1 - f.bias - f.man_bits)
               : std::ldexp((1u << f.man_bits) + man, static_cast<int>(exp) - f.bias - f.man_bits);
  return neg ? -v : v;
}

// The largest finite positive code: codes 0..max are the finite magnitudes in increasing order.
uint32_t max_code(const MiniFloat& f) {
  const uint32_t all = sign_bit(f) - 1;
  switch (f.special) {
    case Special::kAllOnes:
      return all - 1;
    case Special::kIeee754:
      return ((1u << f.exp_bits) - 2) << f.man_bits | ((1u << f.man_bits) - 1);
    default:
      return all;
  }
}

// Every code's value, per format, built once.
struct Table {
  std::array<double, 256> value{};
  uint32_t max = 0;
};

const Table& table(DType t) {
  static const auto tables = [] {
    std::array<Table, kMaxDType + 1> all{};
    for (int d = 0; d <= kMaxDType; ++d) {
      const MiniFloat* f = minifloat(static_cast<DType>(d));
      if (!f) continue;
      const uint32_t codes = sign_bit(*f) << 1;
      for (uint32_t c = 0; c < codes; ++c) all[d].value[c] = decode(*f, c);
      all[d].max = max_code(*f);
    }
    return all;
  }();
  return tables[static_cast<size_t>(t)];
}

uint8_t encode_minifloat(DType t, const MiniFloat& f, double v, bool saturate) {
  const Table& tab = table(t);
  const uint32_t sb = sign_bit(f);
  const uint32_t sign = std::signbit(v) ? sb : 0;
  const bool has_nan = f.special != Special::kNone;
  if (std::isnan(v))
    return static_cast<uint8_t>(has_nan ? (f.nan_code | (f.nan_code == 0x80 ? 0 : sign)) : sb);
  // What an overflow becomes: the largest finite value, infinity, or NaN (Cast's tables).
  auto overflow = [&] {
    if (saturate || !has_nan) return static_cast<uint8_t>(sign | tab.max);
    if (f.special == Special::kIeee754) return static_cast<uint8_t>(sign | (tab.max + 1));
    return static_cast<uint8_t>(f.special == Special::kNegZero ? f.nan_code : sign | f.nan_code);
  };
  const double a = std::fabs(v);
  if (std::isinf(a)) return overflow();
  // Largest code whose value is <= a (codes 0..max increase in value).
  uint32_t lo = 0, hi = tab.max;
  while (lo < hi) {
    const uint32_t mid = (lo + hi + 1) / 2;
    if (tab.value[mid] <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  uint32_t code = lo;
  if (tab.value[lo] != a) {
    // The next value up: the code above, or for the largest one, one more step of its binade.
    const double below = tab.value[lo];
    const double above = lo < tab.max ? tab.value[lo + 1] : below + (below - tab.value[lo - 1]);
    const double mid = (below + above) / 2;  // exact: the values are short dyadic fractions
    const bool up = a > mid || (a == mid && (lo & 1u));
    if (up) {
      if (lo == tab.max) return overflow();
      code = lo + 1;
    }
  }
  if (code == 0 && f.special == Special::kNegZero) return 0;  // no negative zero
  return static_cast<uint8_t>(sign | code);
}

// float8e8m0 from the float32 exponent of v, as Cast-24 defines it (sign ignored; zero and
// float32 subnormals have exponent 0, which is 2^-127).
uint8_t encode_e8m0(double v, NarrowCast opts) {
  const float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t exp = (bits >> 23) & 0xFFu;
  if (std::isnan(f)) return 0xFF;
  if (exp == 0xFF) return opts.saturate ? 0xFE : 0xFF;  // infinity
  bool up = false;
  switch (opts.e8m0) {
    case E8M0Rounding::kUp:
      up = (bits & 0x7FFFFFu) != 0;
      break;
    case E8M0Rounding::kNearest: {
      // Round up from half of the mantissa: the guard bit, and then any bit below it or (for
      // normal numbers) the implied one, as the ONNX reference implementation does.
      const bool guard = (bits & 0x400000u) != 0;
      const bool rest = (bits & 0x3FFFFFu) != 0 || exp > 0;
      up = guard && rest;
      break;
    }
    case E8M0Rounding::kDown:
      break;
  }
  if (up && !(opts.saturate && exp == 0xFE)) ++exp;  // 0xFE + 1 is NaN: overflow, unsaturated
  return static_cast<uint8_t>(exp);
}

uint8_t encode_integer(DType t, double v) {
  if (!std::isfinite(v)) return 0;
  const double tr = std::trunc(v);
  // Wrap as an int64 would: values beyond it keep only their low bits, which are zero.
  const int64_t i = std::fabs(tr) < 9.2e18 ? static_cast<int64_t>(tr) : 0;
  const uint32_t mask = dtype_bits(t) == 4 ? 0xFu : 0x3u;
  return static_cast<uint8_t>(static_cast<uint64_t>(i) & mask);
}

}  // namespace

double narrow_to_double(DType t, uint8_t code) {
  switch (t) {
    case DType::kUint4:
      return code & 0xF;
    case DType::kInt4:
      return (code & 0x8) ? static_cast<int>(code & 0xF) - 16 : (code & 0xF);
    case DType::kUint2:
      return code & 0x3;
    case DType::kInt2:
      return (code & 0x2) ? static_cast<int>(code & 0x3) - 4 : (code & 0x3);
    case DType::kFloat8E8M0:
      return code == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, code - 127);
    default: {
      const MiniFloat* f = minifloat(t);
      if (!f) return std::numeric_limits<double>::quiet_NaN();
      return table(t).value[code & ((sign_bit(*f) << 1) - 1)];
    }
  }
}

uint8_t narrow_from_double(DType t, double v, NarrowCast opts) {
  if (is_narrow_integer(t)) return encode_integer(t, v);
  if (t == DType::kFloat8E8M0) return encode_e8m0(v, opts);
  const MiniFloat* f = minifloat(t);
  return f ? encode_minifloat(t, *f, v, opts.saturate) : 0;
}

double dtype_step(DType t, double v) {
  if (!std::isfinite(v)) return 0;
  if (is_integer(t) || is_narrow_integer(t)) return 1;
  const double a = std::fabs(v);
  auto ieee_step = [a](int man_bits, int min_exp) {
    int e = 0;
    std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1): the binade's exponent is e - 1
    return std::ldexp(1.0, std::max(e - 1, min_exp) - man_bits);
  };
  switch (t) {
    case DType::kFloat:
      return ieee_step(23, -126);
    case DType::kDouble:
      return ieee_step(52, -1022);
    case DType::kFloat16:
      return ieee_step(10, -14);
    case DType::kBFloat16:
      return ieee_step(7, -126);
    case DType::kFloat8E8M0: {
      int e = 0;
      std::frexp(a, &e);
      return a == 0 ? std::ldexp(1.0, -127) : std::ldexp(1.0, e - 1);  // the next power is 2a
    }
    default: {
      const MiniFloat* f = minifloat(t);
      if (!f) return 0;
      return ieee_step(f->man_bits, 1 - f->bias);
    }
  }
}

void pack_narrow(DType t, const uint8_t* codes, int64_t n, uint8_t* out) {
  const int b = dtype_bits(t);
  if (b >= 8) {
    if (n > 0) std::memcpy(out, codes, static_cast<size_t>(n) * dtype_size(t));
    return;
  }
  const size_t bytes = (static_cast<size_t>(n) * static_cast<size_t>(b) + 7) / 8;
  std::memset(out, 0, bytes);
  const uint32_t mask = (1u << b) - 1;
  for (int64_t i = 0; i < n; ++i) {
    const size_t bit = static_cast<size_t>(i) * static_cast<size_t>(b);
    const uint32_t v = (codes[i] & mask) << (bit % 8);
    out[bit / 8] |= static_cast<uint8_t>(v);
    if ((bit % 8) + static_cast<size_t>(b) > 8) out[bit / 8 + 1] |= static_cast<uint8_t>(v >> 8);
  }
}

void unpack_narrow(DType t, const uint8_t* packed, int64_t n, uint8_t* codes) {
  const int b = dtype_bits(t);
  if (b >= 8) {
    if (n > 0) std::memcpy(codes, packed, static_cast<size_t>(n) * dtype_size(t));
    return;
  }
  const uint32_t mask = (1u << b) - 1;
  for (int64_t i = 0; i < n; ++i) {
    const size_t bit = static_cast<size_t>(i) * static_cast<size_t>(b);
    uint32_t v = packed[bit / 8] >> (bit % 8);
    if ((bit % 8) + static_cast<size_t>(b) > 8)
      v |= static_cast<uint32_t>(packed[bit / 8 + 1]) << (8 - bit % 8);
    codes[i] = static_cast<uint8_t>(v & mask);
  }
}

void mask_narrow_codes(DType t, uint8_t* codes, size_t n) {
  const int b = dtype_bits(t);
  if (b >= 8 || !(is_narrow_float(t) || is_narrow_integer(t))) return;
  const auto mask = static_cast<uint8_t>((1u << b) - 1);
  for (size_t i = 0; i < n; ++i) codes[i] &= mask;
}

}  // namespace onnxdbg
