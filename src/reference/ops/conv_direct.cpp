// Direct convolution of float16 operands in float32 (conv_direct.h). Each task takes a band of
// output rows of one (image, group) and converts the input rows they read into a zero-padded
// float32 buffer whose rows are split by column phase (column v of a padded row goes to phase
// v % stride, index v / stride), so that for every kernel tap the output columns [j, j + 48) read
// a contiguous run of that buffer. Tiles of up to 8 output channels x 48, 32 or 16 output columns
// of one output row then accumulate in registers over all the taps, each tap one vector load of
// input per 16 columns and one broadcast weight per channel, and are rounded to float16 straight
// into the output: no im2col matrix, no packing of it, and no float32 copy of the output.
#include "reference/ops/conv_direct.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "core/run_limits.h"
#include "onnxdbg/dtype.h"
#include "reference/parallel.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define ODB_DIRECT_CONV_X86 1
#endif

namespace onnxdbg::reference {
namespace {

// The widest column tile (three AVX-512 vectors): every padded row holds this many zeros past its
// last column read, so that a tile's loads never leave the row, whatever its width.
constexpr int64_t kSlack = 48;
// The padded input rows a task converts, in floats (about 1 MiB; see make_plan).
constexpr int64_t kBandFloats = int64_t{1} << 18;

// Everything a tile needs, in elements of the padded buffer (see the file comment).
struct Plan {
  int64_t n = 0, c = 0, m = 0, group = 0, cg = 0, mg = 0;
  int64_t h = 1, w = 1, oh = 1, ow = 1, kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0,
          pw = 0;
  int64_t ld = 0;   // per (row, phase, channel): ow + (kw - 1) * dw / sw + kSlack, rounded up to 16
  int64_t row = 0;  // one padded row of all phases and channels of a group: sw * cg * ld
  int64_t ext = 1;  // padded rows one output row reads: (kh - 1) * dh + 1
  int64_t band = 1;           // output rows per task (see make_plan)
  int64_t k = 0;              // taps per output: cg * kh * kw
  std::vector<int64_t> koff;  // per tap: its offset from the tile's base
};

// One tile: out[r * ldo + j] = the sum over taps t of wp[t * R + r] * xb[koff[t] + j], plus bias[r]
// (null for none), rounded to float16 (round to nearest even), for r < R and j < cols; each sum
// one fused multiply-add per tap in tap order from 0, in float32. Reads the tile's full width of
// xb per tap whatever `cols` is (the padded rows' slack covers it).
using TileFn = void (*)(int64_t k, const float* wp, const float* xb, const int64_t* koff,
                        uint16_t* out, int64_t ldo, int64_t cols, const float* bias);

template <int R>
void tile_scalar(int64_t k, const float* wp, const float* xb, const int64_t* koff, uint16_t* out,
                 int64_t ldo, int64_t cols, const float* bias) {
  constexpr int kCols = 8;
  float acc[R][kCols] = {};
  for (int64_t t = 0; t < k; ++t) {
    const float* x = xb + koff[t];
    for (int r = 0; r < R; ++r) {
      const float wv = wp[t * R + r];
      for (int j = 0; j < kCols; ++j) acc[r][j] = std::fma(wv, x[j], acc[r][j]);
    }
  }
  for (int r = 0; r < R; ++r) {
    if (bias)
      for (float& v : acc[r]) v += bias[r];
    float_to_float16(acc[r], out + r * ldo, static_cast<size_t>(cols));
  }
}

#ifdef ODB_DIRECT_CONV_X86
// The vector tiles, one definition for each instruction set (its target, vector type, lanes and
// intrinsics): V vectors of output columns (fewer for a row's last columns), R output channels.
// Each vector of sums is rounded to float16 by VCVTPS2PH (immediate 0: round to nearest even, as
// float_to_float16) and stored whole, or through `part` where the row ends inside it.
#define ODB_DIRECT_TILE(NAME, TARGET, VEC, HALF, LANES, ZERO, LOADU, SET1, FMADD, ADD, TO_HALF, \
                        STORE_HALF)                                                             \
  template <int R, int V>                                                                       \
  __attribute__((target(TARGET))) void NAME(int64_t k, const float* wp, const float* xb,        \
                                            const int64_t* koff, uint16_t* out, int64_t ldo,    \
                                            int64_t cols, const float* bias) {                  \
    VEC acc[V][R];                                                                              \
    _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {                                       \
      _Pragma("GCC unroll 3") for (int v = 0; v < V; ++v) acc[v][r] = ZERO();                   \
    }                                                                                           \
    for (int64_t t = 0; t < k; ++t) {                                                           \
      const float* x = xb + koff[t];                                                            \
      VEC xv[V];                                                                                \
      _Pragma("GCC unroll 3") for (int v = 0; v < V; ++v) xv[v] = LOADU(x + LANES * v);         \
      const float* wt = wp + t * R;                                                             \
      _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {                                     \
        const VEC wv = SET1(wt[r]);                                                             \
        _Pragma("GCC unroll 3") for (int v = 0; v < V; ++v) acc[v][r] =                         \
            FMADD(wv, xv[v], acc[v][r]);                                                        \
      }                                                                                         \
    }                                                                                           \
    for (int r = 0; r < R; ++r)                                                                 \
      for (int v = 0; v < V && LANES * v < cols; ++v) {                                         \
        const HALF h = TO_HALF(bias ? ADD(acc[v][r], SET1(bias[r])) : acc[v][r], 0);            \
        uint16_t* o = out + r * ldo + LANES * v;                                                \
        if (cols >= LANES * (v + 1)) {                                                          \
          STORE_HALF(reinterpret_cast<HALF*>(o), h);                                            \
        } else {                                                                                \
          uint16_t part[LANES];                                                                 \
          STORE_HALF(reinterpret_cast<HALF*>(part), h);                                         \
          std::memcpy(o, part, static_cast<size_t>(cols - LANES * v) * sizeof(uint16_t));       \
        }                                                                                       \
      }                                                                                         \
  }
ODB_DIRECT_TILE(tile_avx2, "avx2,fma,f16c", __m256, __m128i, 8, _mm256_setzero_ps, _mm256_loadu_ps,
                _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_cvtps_ph, _mm_storeu_si128)
// _mm512_cvtps_ph with every lane kept (the plain form starts from _mm256_undefined_si256, which
// GCC 12 reports as maybe uninitialized).
__attribute__((target("avx512f"))) inline __m256i cvtps_ph512(__m512 a, int) {
  return _mm512_maskz_cvtps_ph(0xffff, a, 0);
}
ODB_DIRECT_TILE(tile_avx512, "avx512f", __m512, __m256i, 16, _mm512_setzero_ps, _mm512_loadu_ps,
                _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, cvtps_ph512, _mm256_storeu_si256)
#undef ODB_DIRECT_TILE

bool cpu_has(DirectConvIsa isa) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  if (isa == DirectConvIsa::kAvx2) return avx2;
  if (isa == DirectConvIsa::kAvx512) return avx2 && __builtin_cpu_supports("avx512f");
  return true;
}
#else
bool cpu_has(DirectConvIsa isa) { return isa == DirectConvIsa::kScalar; }
#endif

std::atomic<DirectConvIsa> isa_limit{DirectConvIsa::kAvx512};

// The tile functions of one instruction set: tiles[v][R - 1] computes R output channels (up to
// `rows`) of cols[v] output columns (v + 1 vectors); a row takes the widest tile while more than
// that is left, then the narrowest one that covers what is left.
struct Kernels {
  int rows = 0;
  int64_t cols[3] = {};
  TileFn tiles[3][8] = {};
};

// k's tiles of V vectors (R + 1 channels each, for every R of the sequence).
template <int V, int... R>
void fill_avx512(Kernels& k, std::integer_sequence<int, R...>) {
  k.cols[V - 1] = 16 * V;
  ((k.tiles[V - 1][R] = tile_avx512<R + 1, V>), ...);
}

template <int V, int... R>
void fill_avx2(Kernels& k, std::integer_sequence<int, R...>) {
  k.cols[V - 1] = 8 * V;
  ((k.tiles[V - 1][R] = tile_avx2<R + 1, V>), ...);
}

Kernels kernels_for(DirectConvIsa isa) {
  Kernels k;
#ifdef ODB_DIRECT_CONV_X86
  if (isa == DirectConvIsa::kAvx512) {
    k.rows = 8;
    constexpr auto rows = std::make_integer_sequence<int, 8>();
    fill_avx512<1>(k, rows), fill_avx512<2>(k, rows), fill_avx512<3>(k, rows);
    return k;
  }
  if (isa == DirectConvIsa::kAvx2) {
    k.rows = 6;
    constexpr auto rows = std::make_integer_sequence<int, 6>();
    fill_avx2<1>(k, rows), fill_avx2<2>(k, rows);
    k.cols[2] = k.cols[1];
    std::copy(std::begin(k.tiles[1]), std::end(k.tiles[1]), std::begin(k.tiles[2]));
    return k;
  }
#endif
  k.rows = 4;
  for (int v = 0; v < 3; ++v) {
    k.cols[v] = 8;
    k.tiles[v][0] = tile_scalar<1>, k.tiles[v][1] = tile_scalar<2>;
    k.tiles[v][2] = tile_scalar<3>, k.tiles[v][3] = tile_scalar<4>;
  }
  return k;
}

DirectConvIsa chosen_isa() {
  const auto available = direct_conv_isas_available();
  return std::min(available.back(), isa_limit.load());
}

// The plan's geometry from g, 1-D convolutions as 2-D ones of height 1.
Plan make_plan(const Tensor& x, const Tensor& w, int64_t group, const SpatialGeometry& g) {
  Plan p;
  p.n = x.dim(0);
  p.c = x.dim(1);
  p.m = w.dim(0);
  p.group = group;
  p.cg = p.c / group;
  p.mg = p.m / group;
  const size_t last = g.in.size() - 1;
  if (g.in.size() == 2) {
    p.h = g.in[0], p.oh = g.out[0], p.kh = g.kernel[0], p.sh = g.strides[0];
    p.dh = g.dilations[0], p.ph = g.pads_begin[0];
  }
  p.w = g.in[last], p.ow = g.out[last], p.kw = g.kernel[last], p.sw = g.strides[last];
  p.dw = g.dilations[last], p.pw = g.pads_begin[last];
  // A multiple of 16 floats, so that every padded row starts on a 64-byte line and the loads of
  // the taps in its first column (one in kw) do not straddle two lines.
  p.ld = (p.ow + (p.kw - 1) * p.dw / p.sw + kSlack + 15) / 16 * 16;
  p.row = p.sw * p.cg * p.ld;
  p.ext = (p.kh - 1) * p.dh + 1;
  // Bands of output rows whose padded input rows, converted by the task that computes them, fit
  // in about a megabyte (the second-level cache), at most 16 rows: the copy is read while it is
  // still in the cache, at the cost of converting the (kh - 1) * dh rows bands share twice.
  while (p.band < 16 && (p.band * p.sh + p.ext) * p.row <= kBandFloats) ++p.band;
  p.k = p.cg * p.kh * p.kw;
  p.koff.reserve(static_cast<size_t>(p.k));
  for (int64_t ci = 0; ci < p.cg; ++ci)
    for (int64_t ki = 0; ki < p.kh; ++ki)
      for (int64_t kj = 0; kj < p.kw; ++kj)
        p.koff.push_back(ki * p.dh * p.row + (kj * p.dw % p.sw * p.cg + ci) * p.ld +
                         kj * p.dw / p.sw);
  return p;
}

// Fills padded rows [u0, u1) of input channel ci of a group (x: the channel's plane): padded row
// u, phase f, index q (at dst[(((u - u0) * sw + f) * cg + ci) * ld + q]) holds x[u - ph][q * sw +
// f - pw], or 0 outside x. `row` is scratch for one input row in float32.
void pad_rows(const Plan& p, const uint16_t* x, int64_t ci, int64_t u0, int64_t u1, float* dst,
              float* row) {
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t src = u - p.ph;
    const bool inside = src >= 0 && src < p.h;
    for (int64_t f = 0; f < p.sw; ++f) {
      float* out = dst + (((u - u0) * p.sw + f) * p.cg + ci) * p.ld;
      if (!inside) {
        std::fill(out, out + p.ld, 0.0f);
        continue;
      }
      if (p.sw == 1) {
        // Columns [pw, pw + w) are the row; the rest padding (pw <= ld: the window fits).
        const int64_t lo = std::min(p.pw, p.ld), hi = std::min(p.ld, p.pw + p.w);
        std::fill(out, out + lo, 0.0f);
        if (hi > lo)
          float16_to_float(x + src * p.w + (lo - p.pw), out + lo, static_cast<size_t>(hi - lo));
        std::fill(out + std::max(lo, hi), out + p.ld, 0.0f);
        continue;
      }
      if (f == 0) float16_to_float(x + src * p.w, row, static_cast<size_t>(p.w));
      // Indexes [lo, hi) read the row (0 <= q * sw + f - pw < w); the others are padding.
      const int64_t first = p.pw - f, lo = std::clamp<int64_t>((first + p.sw - 1) / p.sw, 0, p.ld);
      const int64_t hi = std::clamp<int64_t>((p.w + first + p.sw - 1) / p.sw, lo, p.ld);
      std::fill(out, out + lo, 0.0f);
      const float* in = row + (lo * p.sw - first);
      for (int64_t q = 0; q < hi - lo; ++q) out[lo + q] = in[q * p.sw];
      std::fill(out + hi, out + p.ld, 0.0f);
    }
  }
}

// W of every group packed by blocks of `rows` output channels: block [m0, m0 + R) of group gi at
// (gi * mg + m0) * k holds w[gi * mg + m0 + r][t] at t * R + r.
std::vector<float> pack_weights(const Plan& p, const Tensor& w, int rows) {
  std::vector<float> wf(static_cast<size_t>(p.m * p.k)), packed(wf.size());
  float16_to_float(reinterpret_cast<const uint16_t*>(w.raw()), wf.data(), wf.size());
  for (int64_t gi = 0; gi < p.group; ++gi)
    for (int64_t m0 = 0; m0 < p.mg; m0 += rows) {
      const int64_t r_count = std::min<int64_t>(rows, p.mg - m0), base = (gi * p.mg + m0) * p.k;
      for (int64_t r = 0; r < r_count; ++r)
        for (int64_t t = 0; t < p.k; ++t)
          packed[static_cast<size_t>(base + t * r_count + r)] =
              wf[static_cast<size_t>(base + r * p.k + t)];
    }
  return packed;
}

}  // namespace

const char* direct_conv_isa_name(DirectConvIsa isa) {
  switch (isa) {
    case DirectConvIsa::kScalar:
      return "scalar";
    case DirectConvIsa::kAvx2:
      return "avx2";
    case DirectConvIsa::kAvx512:
      return "avx512";
  }
  return "?";
}

std::vector<DirectConvIsa> direct_conv_isas_available() {
  static const std::vector<DirectConvIsa> available = [] {
    std::vector<DirectConvIsa> v;
    for (auto isa : {DirectConvIsa::kScalar, DirectConvIsa::kAvx2, DirectConvIsa::kAvx512})
      if (cpu_has(isa)) v.push_back(isa);
    return v;
  }();
  return available;
}

void set_direct_conv_isa_limit(DirectConvIsa limit) { isa_limit.store(limit); }

bool conv_direct_applies(const SpatialGeometry& g, int64_t c, int64_t group) {
  const size_t nd = g.in.size();
  if (nd < 1 || nd > 2 || group < 1 || (c / group == 1 && group > 1)) return false;
  const size_t last = nd - 1;
  const int64_t sw = g.strides[last];
  if (sw > 4) return false;
  // The padded rows of one channel, all bands together: (oh - 1) * sh + (kh - 1) * dh + 1 rows of
  // sw phases of about ld elements, counted in double so that nothing overflows.
  double rows = 1, in = static_cast<double>(g.in[last]);
  if (nd == 2) {
    rows = static_cast<double>(g.out[0] - 1) * static_cast<double>(g.strides[0]) +
           static_cast<double>(g.kernel[0] - 1) * static_cast<double>(g.dilations[0]) + 1;
    in *= static_cast<double>(g.in[0]);
  }
  const double ld = static_cast<double>(g.out[last]) +
                    static_cast<double>(g.kernel[last] - 1) *
                        static_cast<double>(g.dilations[last]) / static_cast<double>(sw) +
                    kSlack;
  return rows * static_cast<double>(sw) * ld <= 4 * in + 4096;
}

Status conv_direct_float16(const Tensor& x, const Tensor& w, const Tensor* bias, int64_t group,
                           const SpatialGeometry& g, Tensor& y) {
  const Plan p = make_plan(x, w, group, g);
  const Kernels kern = kernels_for(chosen_isa());
  if (p.n == 0 || p.m == 0 || p.oh == 0 || p.ow == 0) return Status::ok();
  const auto* px = reinterpret_cast<const uint16_t*>(x.raw());
  const std::vector<float> packed = pack_weights(p, w, kern.rows);
  std::vector<float> b(static_cast<size_t>(p.m), 0.0f);
  if (bias) float16_to_float(reinterpret_cast<const uint16_t*>(bias->raw()), b.data(), b.size());
  auto* py = reinterpret_cast<uint16_t*>(y.raw());
  const int64_t bands = (p.oh + p.band - 1) / p.band;
  // One task per band of output rows of each (image, group): its padded input rows, then per row
  // the mg x ow sums in float32, each tile's rounded to float16 into y as it is finished.
  return parallel_for_status(p.n * p.group * bands, [&](int64_t task) {
    ODB_RETURN_IF_ERROR(check_run_limits());
    const int64_t bi = task % bands, gi = task / bands % p.group, img = task / (bands * p.group);
    const int64_t r0 = bi * p.band, r1 = std::min(p.oh, r0 + p.band);
    const int64_t u0 = r0 * p.sh, u1 = (r1 - 1) * p.sh + p.ext;
    float* padded =
        thread_scratch<float, 1>(static_cast<size_t>((u1 - u0) * p.row));  // 64-byte aligned
    float* in_row = thread_scratch<float, 2>(static_cast<size_t>(p.w));
    for (int64_t ci = 0; ci < p.cg; ++ci)
      pad_rows(p, px + (img * p.c + gi * p.cg + ci) * p.h * p.w, ci, u0, u1, padded, in_row);
    for (int64_t r = r0; r < r1; ++r) {
      const float* xb = padded + (r - r0) * p.sh * p.row;
      uint16_t* yr = py + ((img * p.m + gi * p.mg) * p.oh + r) * p.ow;
      // Column tiles outside, channel blocks inside: the input a column tile reads stays in the
      // first-level cache for every block of output channels.
      for (int64_t j0 = 0; j0 < p.ow;) {
        const int64_t left = p.ow - j0;
        int v = 2;
        while (v > 0 && kern.cols[v - 1] >= left) --v;
        for (int64_t m0 = 0; m0 < p.mg; m0 += kern.rows) {
          const int64_t rows = std::min<int64_t>(kern.rows, p.mg - m0);
          kern.tiles[v][rows - 1](p.k, packed.data() + (gi * p.mg + m0) * p.k, xb + j0,
                                  p.koff.data(), yr + m0 * p.oh * p.ow + j0, p.oh * p.ow,
                                  std::min(kern.cols[v], left),
                                  bias ? b.data() + gi * p.mg + m0 : nullptr);
        }
        j0 += kern.cols[v];
      }
    }
    return Status::ok();
  });
}

}  // namespace onnxdbg::reference

#undef ODB_DIRECT_CONV_X86
