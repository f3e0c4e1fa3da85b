// QLinearConv (ONNX QLinearConv-10): quantized convolution. The exact integer convolution of
// (x - x_zp) and (w - w_zp) plus the int32 bias B is rescaled by x_scale * w_scale / y_scale
// (w's scale and zero point per tensor or per output channel), rounded half to even, shifted by
// y_zp and saturated to y_zp's type. Attributes as Conv. Each band of sums is requantized as the
// integer kernels finish it (integer_conv's `done`).
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include "reference/ops/quant_common.h"

namespace onnxdbg::reference {
namespace {

// out[i] = saturate(round_half_even((s[i] + add) * mul) + zero) for the sums s of one output
// plane. The AVX-512 and AVX2 clones do the same double operations eight and four at a time (no
// FMA: neither target implies -mfma, and GCC contracts nothing without it), so every clone gives
// the same bits.
#define ODB_REQUANTIZE_PLANE(S, O)                                                                \
  [[gnu::target_clones("avx512f", "avx2", "default")]] void requantize_plane(                     \
      const S* __restrict s, O* __restrict out, int64_t n, double add, double mul, double zero) { \
    for (int64_t i = 0; i < n; ++i)                                                               \
      out[i] = requantize<O>((static_cast<double>(s[i]) + add) * mul, zero);                      \
  }
ODB_REQUANTIZE_PLANE(int32_t, uint8_t)
ODB_REQUANTIZE_PLANE(int32_t, int8_t)
ODB_REQUANTIZE_PLANE(float, uint8_t)
ODB_REQUANTIZE_PLANE(float, int8_t)
ODB_REQUANTIZE_PLANE(double, uint8_t)
ODB_REQUANTIZE_PLANE(double, int8_t)
#undef ODB_REQUANTIZE_PLANE

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// requantize_plane for int32 sums (the 8-bit kernels'), eight at a time in AVX-512 registers: the
// same double operations in the same order as requantize (round half to even by adding and
// subtracting 1.5 * 2^52 below 2^52, then the zero point, the saturation and NaN to 0), so the
// same bits; GCC's clone of the loop above keeps them in four-lane registers and spills.
// GCC 12's intrinsics leave their pass-through operand undefined on purpose, which
// -Wmaybe-uninitialized reports inside its own headers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <class O>
__attribute__((target("avx512f,avx512vl"))) void requantize_plane_avx512(const int32_t* s, O* out,
                                                                         int64_t n, double add,
                                                                         double mul, double zero) {
  const __m512d va = _mm512_set1_pd(add), vm = _mm512_set1_pd(mul), vz = _mm512_set1_pd(zero);
  const __m512d lo = _mm512_set1_pd(std::numeric_limits<O>::min()),
                hi = _mm512_set1_pd(std::numeric_limits<O>::max());
  const __m512d magic = _mm512_set1_pd(0x1.8p52), big = _mm512_set1_pd(0x1p52);
  const __m512i abs_mask = _mm512_set1_epi64(0x7fffffffffffffffLL);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m512d v = _mm512_cvtepi32_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
    v = _mm512_mul_pd(_mm512_add_pd(v, va), vm);
    const __m512d av = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(v), abs_mask));
    __m512d r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(av, big, _CMP_LT_OQ), v,
                                     _mm512_sub_pd(_mm512_add_pd(v, magic), magic));
    r = _mm512_add_pd(r, vz);
    r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(r, lo, _CMP_LT_OQ), r, lo);
    r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(r, hi, _CMP_GT_OQ), r, hi);
    r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(r, r, _CMP_UNORD_Q), r, _mm512_setzero_pd());
    // Integral values within O's range: truncating to int32, then to the low byte, is exact.
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtepi32_epi8(_mm512_cvttpd_epi32(r)));
  }
  for (; i < n; ++i) out[i] = requantize<O>((static_cast<double>(s[i]) + add) * mul, zero);
}
#pragma GCC diagnostic pop

bool has_avx512_vl() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  return has;
}
#define ODB_REQUANTIZE_AVX512 1
#endif

// One plane part of any sums type: int32 sums (the 8-bit kernels') take the AVX-512 path where
// the CPU has it.
template <class S, class O>
void requantize_part(const S* s, O* out, int64_t n, double add, double mul, double zero) {
#ifdef ODB_REQUANTIZE_AVX512
  if constexpr (std::is_same_v<S, int32_t>)
    if (has_avx512_vl()) return requantize_plane_avx512(s, out, n, add, mul, zero);
#endif
  requantize_plane(s, out, n, add, mul, zero);
}

Status q_linear_conv(KernelContext& ctx) {
  std::vector<const Tensor*> in(8);
  for (size_t i = 0; i < 8; ++i) {
    ODB_ASSIGN_OR_RETURN(in[i], ctx.required_input(i));
  }
  const Tensor &x = *in[0], &w = *in[3];
  if (!is_8bit(x.dtype()) || !is_8bit(w.dtype()) || !is_8bit(in[7]->dtype()))
    return unsupported(ctx.describe() + ": x, w and y_zero_point must be uint8 or int8");
  if (w.rank() < 1) return model_error(ctx.describe() + ": w must have rank >= 3");
  const int64_t m = w.dim(0);
  ODB_ASSIGN_OR_RETURN(auto xs, per_slice_values(ctx, in[1], 1, "x_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto xz, per_slice_values(ctx, in[2], 1, "x_zero_point"));
  ODB_ASSIGN_OR_RETURN(auto ws, per_slice_values(ctx, in[4], m, "w_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto wz, per_slice_values(ctx, in[5], m, "w_zero_point"));
  ODB_ASSIGN_OR_RETURN(auto ys, per_slice_values(ctx, in[6], 1, "y_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto yz, per_slice_values(ctx, in[7], 1, "y_zero_point"));
  std::vector<double> bias(static_cast<size_t>(m), 0.0);
  if (const Tensor* b = ctx.input(8)) {
    if (b->dtype() != DType::kInt32 || b->numel() != m)
      return model_error(ctx.describe() + ": B must be int32 of shape [" + std::to_string(m) +
                         "], got " + std::string(dtype_name(b->dtype())) + " " +
                         shape_to_string(b->shape()));
    for (int64_t i = 0; i < m; ++i) bias[static_cast<size_t>(i)] = b->get_as_double(i);
  }
  // The output first, so that each band of sums is requantized as soon as it is computed, while
  // it is in the cache.
  ODB_ASSIGN_OR_RETURN(const IntegerConvGeometry geo, integer_conv_geometry(ctx, x, w));
  const DType out_type = in[7]->dtype();
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output_uninitialized(ctx, out_type, geo.out_shape));
  const int64_t plane = y.numel() / std::max<int64_t>(geo.out_shape[0] * m, 1);
  const int64_t mg = m / geo.group;
  std::vector<double> multiplier(static_cast<size_t>(m));
  for (size_t ch = 0; ch < multiplier.size(); ++ch) multiplier[ch] = xs[0] * ws[ch] / ys[0];
  // Per channel: y = saturate(round_half_even((acc + bias) * multiplier) + y_zp).
  const auto requantize_sums = [&](const IntegerSums& acc, int64_t image, int64_t gi, int64_t q0,
                                   int64_t count) {
    acc.visit([&](const auto* sums) {
      for (int64_t ch = gi * mg; ch < (gi + 1) * mg; ++ch) {
        const int64_t at = (image * m + ch) * plane + q0;
        const auto cu = static_cast<size_t>(ch);
        if (out_type == DType::kUint8)
          requantize_part(sums + at, y.data<uint8_t>() + at, count, bias[cu], multiplier[cu],
                          yz[0]);
        else
          requantize_part(sums + at, y.data<int8_t>() + at, count, bias[cu], multiplier[cu], yz[0]);
      }
    });
  };
  if (plane > 0) {
    Shape out_shape;
    // The sums themselves are not needed once requantized.
    auto sums = integer_conv(ctx, x, w, xz[0], wz, out_shape, requantize_sums);
    if (!sums) return std::move(sums).status();
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_q_linear_conv(KernelRegistry& r) {
  r.add("QLinearConv", 10, q_linear_conv, HalfMode::kNative);
}

}  // namespace onnxdbg::reference

#undef ODB_REQUANTIZE_AVX512
