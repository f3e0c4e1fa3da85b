// DynamicQuantizeLinear (ONNX DynamicQuantizeLinear-11): uint8 quantization of a float tensor with
// scale = (max(x, 0) - min(x, 0)) / 255 and zero point saturate(round(-min(x, 0) / scale));
// outputs y, y_scale (float scalar) and y_zero_point (uint8 scalar).
#include <immintrin.h>

#include "reference/ops/quant_common.h"

namespace onnxdbg::reference {
namespace {

// lo = min(lo, x[i]), hi = max(hi, x[i]) over x, NaN ignored, in eight independent lanes so that
// the loop vectorises; min and max do not depend on the order (a -0 never replaces the starting
// +0, in any lane), so the result is the one of a plain loop.
[[gnu::target_clones("avx2", "default")]] void min_max(const float* __restrict x, int64_t n,
                                                       float& lo, float& hi) {
  constexpr int kLanes = 8;
  float l[kLanes], h[kLanes];
  for (int j = 0; j < kLanes; ++j) l[j] = h[j] = 0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      l[j] = x[i + j] < l[j] ? x[i + j] : l[j];
      h[j] = x[i + j] > h[j] ? x[i + j] : h[j];
    }
  for (; i < n; ++i) {
    l[0] = x[i] < l[0] ? x[i] : l[0];
    h[0] = x[i] > h[0] ? x[i] : h[0];
  }
  for (int j = 0; j < kLanes; ++j) {
    lo = l[j] < lo ? l[j] : lo;
    hi = h[j] > hi ? h[j] : hi;
  }
}

// y[i] = saturate(round_half_even(x[i] / scale) + zp) to uint8 (NaN gives 0), in float: the
// rounded quotient is an integer, and adding zp (0 to 255) to it is exact below 2^24 and
// saturates above, so this is what rounding and adding in double gives.
[[gnu::target_clones("avx2", "default")]] void quantize_row(const float* __restrict x,
                                                            uint8_t* __restrict y, int64_t n,
                                                            float scale, float zp) {
  for (int64_t i = 0; i < n; ++i) {
    float r = round_half_even(x[i] / scale) + zp;
    r = r < 0.0f ? 0.0f : r;
    r = r > 255.0f ? 255.0f : r;
    r = std::isnan(r) ? 0.0f : r;
    y[i] = static_cast<uint8_t>(static_cast<int32_t>(r));
  }
}

// quantize_row sixteen lanes at a time: vroundscaleps rounds half to even as round_half_even
// does, max(r, 0) turns NaN into 0 (it returns its second operand when one is NaN), and the
// saturating narrow stores the (integer, in-range) values: the same bytes.
[[gnu::target("avx512f,avx512bw,avx512vl")]] void quantize_row_avx512(const float* x, uint8_t* y,
                                                                      int64_t n, float scale,
                                                                      float zp) {
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zp), zero = _mm512_setzero_ps();
  const __m512 top = _mm512_set1_ps(255.0f);
  // The masked forms of the intrinsics: GCC 12 warns that the others' undefined passthrough
  // "may be used uninitialized".
  const __m512i none = _mm512_setzero_si512();
  for (int64_t i = 0; i < n; i += 16) {
    const auto mask = static_cast<__mmask16>(n - i >= 16 ? 0xffff : (1u << (n - i)) - 1u);
    const __m512 q = _mm512_div_ps(_mm512_maskz_loadu_ps(mask, x + i), s);
    __m512 r = _mm512_add_ps(
        _mm512_maskz_roundscale_ps(0xffff, q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), z);
    r = _mm512_maskz_min_ps(0xffff, _mm512_maskz_max_ps(0xffff, r, zero), top);
    _mm_mask_storeu_epi8(
        y + i, mask,
        _mm512_maskz_cvtusepi32_epi8(0xffff, _mm512_mask_cvtps_epu32(none, 0xffff, r)));
  }
}

Status dynamic_quantize_linear(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->dtype() != DType::kFloat)
    return unsupported(ctx.describe() + ": x must be float32, got " +
                       std::string(dtype_name(x->dtype())));
  const float* px = x->data<float>();
  float lo = 0, hi = 0;
  min_max(px, x->numel(), lo, hi);
  const float scale = (hi - lo) / 255.0f;
  const double zp =
      scale == 0 ? 0 : saturate_round(static_cast<double>(0.0f - lo / scale), DType::kUint8);
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output_uninitialized(ctx, DType::kUint8, x->shape()));
  uint8_t* py = y.data<uint8_t>();
  if (scale == 0) {
    std::fill(py, py + x->numel(), static_cast<uint8_t>(zp));
  } else {
    static const bool avx512 = __builtin_cpu_supports("avx512f") &&
                               __builtin_cpu_supports("avx512bw") &&
                               __builtin_cpu_supports("avx512vl");
    (avx512 ? quantize_row_avx512 : quantize_row)(px, py, x->numel(), scale,
                                                  static_cast<float>(zp));
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, Tensor::scalar<float>(scale));
  ctx.set_output(2, Tensor::scalar<uint8_t>(static_cast<uint8_t>(zp)));
  return Status::ok();
}

}  // namespace

void register_dynamic_quantize_linear(KernelRegistry& r) {
  r.add("DynamicQuantizeLinear", 11, dynamic_quantize_linear, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
