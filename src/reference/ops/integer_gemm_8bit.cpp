// conv_forward_8bit and matmul_8bit (integer_gemm.h): the quantized products on their 8-bit
// operands as stored, by AVX-512 VNNI's vpdpbusd, which multiplies four unsigned bytes by four
// signed bytes and adds the four products into one int32 lane.
//
// The operands are mapped to the instruction's types by flipping the top bit, and the zero
// points folded in afterwards. With a_s = a - sa (int8: sa = 128 for a uint8 A, else 0) and
// b_u = b + sb (uint8: sb = 128 for an int8 B, else 0), A0 = a_zero - sa and B0 = b_zero + sb:
//   sum_k (a - a_zero)(b - b_zero) = sum_k (a_s - A0)(b_u - B0)
//                                  = S - B0 * RA - A0 * CB + K * A0 * B0
// where S = sum_k a_s b_u (vpdpbusd's sums), RA = sum_k a_s (per row) and CB = sum_k b_u (per
// column). Every term is taken modulo 2^32, which is exact whenever the true sum lies in int32:
// the callers guarantee it by bounding K * 255 * 255 below 2^31. Padding (K up to a multiple of
// 4, partial column strips) is 0 in both a_s and b_u, so it adds nothing to S, RA or CB.
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "core/run_limits.h"
#include "reference/ops/integer_gemm.h"

namespace onnxdbg::reference {
namespace {

// Rows per micro-tile and columns per strip: 8 rows x 2 strips of 16 columns keep 16
// accumulators, 2 strip vectors and a broadcast in AVX-512's 32 registers (12 rows, 24
// accumulators, made GCC 12 spill them).
constexpr int kTileRows = 8;
constexpr int64_t kStrip = 16;
// AMX tiles: 16 rows of 64 bytes (A: 16 rows x 64 k; B: 16 quads x 16 columns; C: 16 x 16 int32).
constexpr int64_t kAmxRows = 16;
constexpr int64_t kAmxK = 64;
// Output columns per band of a convolution (one im2col each: 1,024 keeps a band of K = 576 bytes
// per column in L2 while its strips are packed, 5-10% faster than 4,096 on the QLinearConv CNN)
// and per block of a matrix product (one task each): fixed by the shapes, so the work split does
// not depend on the thread count.
constexpr int64_t kBandColumns = 1024;
constexpr int64_t kBlockColumns = 256;

// K padded as signed_rows pads it for the kernel (to 64 for AMX, else to 4).
int64_t padded_k(int64_t k, bool amx) {
  const int64_t align = amx ? kAmxK : 4;
  return std::max<int64_t>((k + align - 1) / align * align, align);
}

// The bytes of a uint8 or int8 tensor.
const uint8_t* bytes_of(const Tensor& t) { return reinterpret_cast<const uint8_t*>(t.raw()); }

// The A operand of vpdpbusd's signed side: `rows` rows of k values as int8 (a_s), each padded
// with zeros to kp (k rounded up to 4, or to 64 for AMX), with per row A0 and u = RA - K * A0
// (modulo 2^32).
struct SignedRows {
  AlignedArray<int8_t> values;  // rows start at 64-byte boundaries when kp is a multiple of 64
  int64_t rows = 0, k = 0, kp = 0;
  std::vector<int32_t> a0, u;
};

uint32_t wrap(int64_t v) { return static_cast<uint32_t>(v); }

// a: rows x k bytes (uint8 when a_unsigned, else int8); zero: the zero point of row r is
// zero[r % zero.size()] (0 when empty); amx: laid out for multiply_amx.
SignedRows signed_rows(const uint8_t* a, bool a_unsigned, int64_t rows, int64_t k,
                       const std::vector<double>& zero, bool amx) {
  SignedRows s;
  s.rows = rows;
  s.k = k;
  // AMX reads A in tiles of 16 rows x 64 bytes: K padded to 64, and 32 zero rows more, so that
  // the last tiles of any row block stay inside the buffer (their sums are not stored).
  s.kp = padded_k(k, amx);
  const int64_t padded_rows = rows + (amx ? 2 * kAmxRows : 0);
  s.values = make_aligned<int8_t>(static_cast<size_t>(std::max<int64_t>(padded_rows * s.kp, 1)));
  std::fill(s.values.get() + rows * s.kp, s.values.get() + padded_rows * s.kp, int8_t{0});
  s.a0.resize(static_cast<size_t>(rows));
  s.u.resize(static_cast<size_t>(rows));
  const uint8_t flip = a_unsigned ? 0x80 : 0;
  const int32_t sa = a_unsigned ? 128 : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = a + r * k;
    int8_t* dst = s.values.get() + r * s.kp;
    int32_t sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      const auto v = static_cast<int8_t>(src[j] ^ flip);
      dst[j] = v;
      sum += v;
    }
    std::fill(dst + k, dst + s.kp, int8_t{0});
    const auto z =
        zero.empty() ? 0 : static_cast<int32_t>(zero[static_cast<size_t>(r) % zero.size()]);
    const int32_t a0 = z - sa;
    s.a0[static_cast<size_t>(r)] = a0;
    s.u[static_cast<size_t>(r)] = static_cast<int32_t>(wrap(sum) - wrap(k) * wrap(a0));
  }
  return s;
}

// Stores rows r0-r3 (16 bytes each: columns 0-15 of four consecutive rows of B) as one quad of a
// panel: byte 4c + t of `out` holds row t's column c.
[[gnu::target("avx512f,avx512bw,avx512vl")]] inline void store_quad(__m128i r0, __m128i r1,
                                                                    __m128i r2, __m128i r3,
                                                                    uint8_t* out) {
  const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
  const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
  auto* o = reinterpret_cast<__m128i*>(out);
  _mm_storeu_si128(o, _mm_unpacklo_epi16(lo01, lo23));
  _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(lo01, lo23));
  _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(hi01, hi23));
  _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(hi01, hi23));
}

// cb[c] = the sum of column c's packed bytes over a panel's first `quads` quads: each quad times
// bytes of 1 adds a column's four bytes into its lane.
[[gnu::target("avx512f,avx512bw,avx512vnni")]] inline void column_sums(const uint8_t* panel,
                                                                       int64_t quads, int32_t* cb) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i sums = _mm512_setzero_si512();
  for (int64_t q = 0; q < quads; ++q)
    sums = _mm512_dpbusd_epi32(sums, _mm512_loadu_si512(panel + 64 * q), ones);
  _mm512_storeu_si512(cb, sums);
}

// Packs columns [0, valid) (valid <= 16) of b's rows [0, k) (rows ldb apart), each byte xor
// `flip`, for micro_tile and multiply_amx: per quad q < nq of rows, 64 bytes, byte 4c + t
// holding row 4q + t of column c (16 quads make one AMX B tile). Rows past k and columns past
// `valid` read 0. cb gets the 16 column sums of the packed bytes.
[[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni")]] void pack_strip(
    const uint8_t* b, int64_t ldb, int64_t k, int64_t nq, int64_t valid, uint8_t flip,
    uint8_t* panel, int32_t* cb) {
  // Masked loads read only the `valid` columns (the others read 0, and are never touched).
  const auto mask = static_cast<__mmask16>((1u << valid) - 1u);
  const __m128i f = _mm_maskz_set1_epi8(mask, static_cast<char>(flip));
  const int64_t full = valid > 0 ? k / 4 : 0;
  for (int64_t q = 0; q < full; ++q) {
    const uint8_t* src = b + 4 * q * ldb;
    store_quad(_mm_xor_si128(_mm_maskz_loadu_epi8(mask, src), f),
               _mm_xor_si128(_mm_maskz_loadu_epi8(mask, src + ldb), f),
               _mm_xor_si128(_mm_maskz_loadu_epi8(mask, src + 2 * ldb), f),
               _mm_xor_si128(_mm_maskz_loadu_epi8(mask, src + 3 * ldb), f), panel + 64 * q);
  }
  // The quad K ends in (if K is not a multiple of 4), then zero quads up to nq.
  std::fill(panel + 64 * full, panel + 64 * nq, uint8_t{0});
  if (full < nq && valid > 0)
    for (int64_t c = 0; c < valid; ++c)
      for (int64_t r = 4 * full; r < k; ++r)
        panel[64 * full + 4 * c + (r - 4 * full)] = b[r * ldb + c] ^ flip;
  column_sums(panel, std::min(nq, full + 1), cb);
}

// A band of a 2-D convolution's column matrix (im2col's rows: taps; columns: output positions)
// as pack_strip would pack it, read from a padded copy of the band's input rows (pad_band)
// instead of an im2col matrix: column j is output position q0 + j (output row r = (q0 + j) / ow,
// column oc = (q0 + j) % ow), row t the tap at x[offset[t] + (r - r0) * sh * w + oc * sw], where
// r0 is the band's first output row and x, w the padded copy and its row length: every tap of
// every column lies inside it.
struct ConvColumns {
  const uint8_t* x = nullptr;
  int64_t w = 0, ow = 0, sh = 1, sw = 1, q0 = 0, r0 = 0, k = 0;
  const int64_t* offset = nullptr;  // per tap (channel, kernel row, kernel column) of the copy
};

// Row t for `valid` (<= 16) columns of a strip that pack_conv_strip does not load whole: those
// in output row r from column oc on (n1 of them), then those in row r + 1 from column 0 on
// (n1 < 0: over more rows); columns past `valid` 0; each byte xor f. Stride 1: one or two masked
// loads; else byte by byte.
[[gnu::target("avx512f,avx512bw,avx512vl")]] inline __m128i conv_row(const ConvColumns& cc,
                                                                     int64_t t, int64_t r,
                                                                     int64_t oc, int64_t n1,
                                                                     int64_t valid, __m128i f) {
  const uint8_t* at = cc.x + cc.offset[t] + (r - cc.r0) * cc.sh * cc.w;
  const auto lanes = [](int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); };
  if (n1 >= 0 && cc.sw == 1) {
    const __m128i first = _mm_maskz_loadu_epi8(lanes(n1), at + oc);
    if (n1 == valid) return _mm_xor_si128(first, _mm_maskz_mov_epi8(lanes(valid), f));
    // Lanes [n1, valid) from the next output row's first columns (the masked-off lanes of the
    // load read nothing).
    const __m128i both = _mm_mask_loadu_epi8(
        first, static_cast<__mmask16>(lanes(valid) & ~lanes(n1)), at + cc.sh * cc.w - n1);
    return _mm_xor_si128(both, _mm_maskz_mov_epi8(lanes(valid), f));
  }
  alignas(16) uint8_t row[kStrip] = {};
  for (int64_t c = 0, rc = r, occ = oc; c < valid; ++c) {
    row[c] = cc.x[cc.offset[t] + (rc - cc.r0) * cc.sh * cc.w + occ * cc.sw];
    if (++occ == cc.ow) {
      occ = 0;
      ++rc;
    }
  }
  return _mm_xor_si128(_mm_load_si128(reinterpret_cast<const __m128i*>(row)),
                       _mm_maskz_mov_epi8(lanes(valid), f));
}

// pack_strip's panel and column sums for columns [j, j + valid) of a ConvColumns band.
[[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni")]] void pack_conv_strip(
    const ConvColumns& cc, int64_t j, int64_t nq, int64_t valid, uint8_t flip, uint8_t* panel,
    int32_t* cb) {
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip)), zero = _mm_setzero_si128();
  const int64_t used = valid > 0 ? std::min(nq, (cc.k + 3) / 4) : 0;
  const int64_t r = (cc.q0 + j) / cc.ow, oc = (cc.q0 + j) % cc.ow;
  // Columns in output row r; the rest (two rows at most, else conv_row's byte loop) in the next.
  int64_t n1 = std::min(valid, cc.ow - oc);
  if (valid - n1 > cc.ow) n1 = -1;
  if (n1 == kStrip && cc.sw <= 2) {
    // All 16 columns in one output row (most strips): each row one load at its tap's offset
    // (stride 2: the even bytes of 31).
    const uint8_t* base = cc.x + (r - cc.r0) * cc.sh * cc.w + oc * cc.sw;
    const auto load = [&](int64_t t) {
      if (t >= cc.k) return zero;
      const uint8_t* src = base + cc.offset[t];
      return _mm_xor_si128(
          cc.sw == 1 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)) : even_bytes16(src),
          f);
    };
    for (int64_t q = 0; q < used; ++q)
      store_quad(load(4 * q), load(4 * q + 1), load(4 * q + 2), load(4 * q + 3), panel + 64 * q);
  } else {
    for (int64_t q = 0; q < used; ++q) {
      __m128i rows[4];
      for (int64_t t = 0; t < 4; ++t)
        rows[t] = 4 * q + t < cc.k ? conv_row(cc, 4 * q + t, r, oc, n1, valid, f) : zero;
      store_quad(rows[0], rows[1], rows[2], rows[3], panel + 64 * q);
    }
  }
  std::fill(panel + 64 * used, panel + 64 * nq, uint8_t{0});
  column_sums(panel, std::max<int64_t>(used, 1), cb);
}

// The input rows that output rows [o0, o1) of a 2-D convolution read, padded: per input channel
// of the group (`stride` rows apart), rows (o1 - 1 - o0) * sh + row_ext + 1 of `wp` bytes, row u
// holding x's row o0 * sh - ph + u from column -pw on, `pad` outside x. Returns the copy (thread
// scratch).
uint8_t* pad_band(const uint8_t* x, int64_t channels, const SpatialGeometry& g, int64_t o0,
                  int64_t o1, int64_t wp, uint8_t pad, int64_t stride) {
  const int64_t h = g.in[0], w = g.in[1], sh = g.strides[0], ph = g.pads_begin[0];
  const int64_t pw = g.pads_begin[1], row_ext = (g.kernel[0] - 1) * g.dilations[0];
  const int64_t rows = (o1 - 1 - o0) * sh + row_ext + 1;
  uint8_t* out = thread_scratch<uint8_t, 2>(static_cast<size_t>(channels * stride * wp));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t u = 0; u < rows; ++u) {
      uint8_t* dst = out + (c * stride + u) * wp;
      const int64_t ih = o0 * sh - ph + u;
      if (ih < 0 || ih >= h) {
        std::fill(dst, dst + wp, pad);
        continue;
      }
      // Columns [pw, pw + w) are x's row (clipped to the copy), the others padding.
      const int64_t lo = std::min(pw, wp), hi = std::clamp<int64_t>(pw + w, lo, wp);
      std::fill(dst, dst + lo, pad);
      std::copy(x + (c * h + ih) * w + (lo - pw), x + (c * h + ih) * w + (hi - pw), dst + lo);
      std::fill(dst + hi, dst + wp, pad);
    }
  return out;
}

// acc += vpdpbusd(u, s): per int32 lane, the four products of u's unsigned bytes with s's signed
// bytes. In assembly because GCC 12 copies the accumulator around _mm512_dpbusd_epi32, twice per
// instruction, which halved the kernel's speed.
[[gnu::target("avx512f,avx512vnni")]] inline void dpbusd(__m512i& acc, __m512i u, __m512i s) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(s));
}

// Stores acc (16 sums of S for one row) corrected to sum (a_s - A0)(b_u - B0) as the file's
// comment derives, acc - B0 * u - A0 * CB, at c: the first `valid` of the 16 columns. a0 and u:
// the row's A0 and u; cb and b0: the 16 columns' CB and B0.
[[gnu::target("avx512f,avx512bw")]] inline void store_corrected(__m512i acc, int32_t a0, int32_t u,
                                                                __m512i cb, __m512i b0, int32_t* c,
                                                                int64_t valid) {
  __m512i v = _mm512_sub_epi32(acc, _mm512_mullo_epi32(b0, _mm512_set1_epi32(u)));
  v = _mm512_sub_epi32(v, _mm512_mullo_epi32(cb, _mm512_set1_epi32(a0)));
  _mm512_mask_storeu_epi32(c, static_cast<__mmask16>((1u << valid) - 1u), v);
}

// The sums of kR rows of `a` (rows kp bytes apart, nq quads each) with kS packed strips (each
// 64 * nq bytes, one after the other), corrected by store_corrected, stored in c (rows ldc apart)
// for the first `valid` of the 16 * kS columns. a0 and u: the rows' A0 and u; cb and b0: the
// strips' column sums and B0 (16 * kS each).
template <int kR, int kS>
[[gnu::target("avx512f,avx512bw,avx512vnni")]] void micro_tile(const int8_t* a, int64_t kp,
                                                               int64_t nq, const uint8_t* panels,
                                                               const int32_t* a0, const int32_t* u,
                                                               const int32_t* cb, const int32_t* b0,
                                                               int32_t* c, int64_t ldc,
                                                               int64_t valid) {
  __m512i acc[kR][kS];
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r)
#pragma GCC unroll 2
    for (int s = 0; s < kS; ++s) acc[r][s] = _mm512_setzero_si512();
  for (int64_t q = 0; q < nq; ++q) {
    __m512i bv[kS];
#pragma GCC unroll 2
    for (int s = 0; s < kS; ++s) bv[s] = _mm512_loadu_si512(panels + int64_t{s} * 64 * nq + 64 * q);
#pragma GCC unroll 8
    for (int r = 0; r < kR; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + r * kp + 4 * q, sizeof quad);
      const __m512i av = _mm512_set1_epi32(quad);
#pragma GCC unroll 2
      for (int s = 0; s < kS; ++s) dpbusd(acc[r][s], bv[s], av);
    }
  }
#pragma GCC unroll 2
  for (int s = 0; s < kS; ++s) {
    const int64_t left = std::clamp<int64_t>(valid - s * kStrip, 0, kStrip);
    const __m512i cbv = _mm512_loadu_si512(cb + s * kStrip);
    const __m512i b0v = _mm512_loadu_si512(b0 + s * kStrip);
#pragma GCC unroll 8
    for (int r = 0; r < kR; ++r)
      store_corrected(acc[r][s], a0[r], u[r], cbv, b0v, c + r * ldc + s * kStrip, left);
  }
}

using MicroTile = void (*)(const int8_t*, int64_t, int64_t, const uint8_t*, const int32_t*,
                           const int32_t*, const int32_t*, const int32_t*, int32_t*, int64_t,
                           int64_t);

template <int kS, int... kRows>
constexpr std::array<MicroTile, kTileRows + 1> tiles(std::integer_sequence<int, kRows...>) {
  return {nullptr, micro_tile<kRows + 1, kS>...};
}
constexpr auto kOneStrip = tiles<1>(std::make_integer_sequence<int, kTileRows>());
constexpr auto kTwoStrips = tiles<2>(std::make_integer_sequence<int, kTileRows>());

// Where multiply_vnni and multiply_amx find B's strips: packed from `b` (rows ldb bytes apart,
// each byte xor-ed with `flip`) as they are needed, or read from `packed` (pack_b_8bit).
struct StripSource {
  const uint8_t* b = nullptr;
  int64_t ldb = 0;
  uint8_t flip = 0;
  const PackedB8* packed = nullptr;
  const ConvColumns* conv = nullptr;  // when set, B is this band's column matrix (no b)
};

// The panels of the `count` (1 or 2) strips of columns [j, j + 16 * count), of which the first
// `valid` exist (a strip past them is zeros), one after the other (64 * nq bytes each), with
// their column sums at *cb: from src.packed, or packed into the calling thread's scratch and
// cb_room.
const uint8_t* strips_at(const StripSource& src, int64_t j, int64_t valid, int count, int64_t k,
                         int64_t nq, int32_t* cb_room, const int32_t** cb) {
  if (src.packed) {
    *cb = src.packed->cb.data() + j;
    return src.packed->panels.get() + j / kStrip * 64 * nq;
  }
  uint8_t* panels =
      thread_scratch<uint8_t, 1>(static_cast<size_t>(int64_t{128} * std::max<int64_t>(nq, 1)));
  for (int64_t s = 0; s < count; ++s) {
    const int64_t left = std::clamp<int64_t>(valid - s * kStrip, 0, kStrip);
    if (src.conv)
      pack_conv_strip(*src.conv, j + s * kStrip, nq, left, src.flip, panels + s * 64 * nq,
                      cb_room + s * kStrip);
    else
      pack_strip(src.b + j + s * kStrip, src.ldb, k, nq, left, src.flip, panels + s * 64 * nq,
                 cb_room + s * kStrip);
  }
  *cb = cb_room;
  return panels;
}

// c[r][j] (rows ldc apart) for rows [r0, r0 + rows) of `a` and columns [j0, j1) of B (j0 a
// multiple of 32), by micro_tile; b0 holds every column's B0 and is readable 32 entries past
// j1 - 1.
void multiply_vnni(const SignedRows& a, int64_t r0, int64_t rows, const StripSource& src,
                   const int32_t* b0, int64_t j0, int64_t j1, int32_t* c, int64_t ldc) {
  const int64_t nq = a.kp / 4;
  alignas(64) int32_t cb_room[2 * kStrip];
  for (int64_t j = j0; j < j1; j += 2 * kStrip) {
    const int64_t valid = std::min(2 * kStrip, j1 - j);
    const int strips = valid > kStrip ? 2 : 1;
    const int32_t* cb = nullptr;
    const uint8_t* panels = strips_at(src, j, valid, strips, a.k, nq, cb_room, &cb);
    const auto& table = strips == 2 ? kTwoStrips : kOneStrip;
    for (int64_t r = 0; r < rows; r += kTileRows) {
      const int64_t row = r0 + r;
      const auto tile_rows = static_cast<size_t>(std::min<int64_t>(kTileRows, rows - r));
      table[tile_rows](a.values.get() + row * a.kp, a.kp, nq, panels, a.a0.data() + row,
                       a.u.data() + row, cb, b0 + j, c + r * ldc + j, ldc, valid);
    }
  }
}

// The AMX tile configuration multiply_amx uses: tiles 0-3 the int32 sums of a 32 x 32 block
// (2 x 2 tiles of 16 x 16), 4-5 two A tiles (16 rows x 64 k each), 6-7 two B tiles (16 quads x
// 16 columns each); all 16 rows of 64 bytes. The layout is the one of Intel's
// LDTILECFG (palette 1).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// The int32 sums of 32 rows of `a` (rows kp bytes apart, from a; kp a multiple of 64) with
// `quads` quads (a multiple of 16) of two packed strips (the second strip_bytes after the first)
// into out: 4 tiles of 16 x 16, in the order (rows 0-15, strip 0), (0-15, 1), (16-31, 0),
// (16-31, 1), added to the sums already in out when `accumulate`. Needs multiply_amx's tile
// configuration loaded.
[[gnu::target("amx-tile,amx-int8")]] void amx_block(const int8_t* a, int64_t kp,
                                                    int64_t strip_bytes, int64_t quads,
                                                    const uint8_t* panels, int32_t* out,
                                                    bool accumulate) {
  if (accumulate) {
    _tile_loadd(0, out, 64);
    _tile_loadd(1, out + 256, 64);
    _tile_loadd(2, out + 512, 64);
    _tile_loadd(3, out + 768, 64);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  const uint8_t* second = panels + strip_bytes;
  for (int64_t kc = 0; kc < quads / kAmxRows; ++kc) {
    _tile_loadd(4, a + kc * kAmxK, kp);
    _tile_loadd(5, a + kAmxRows * kp + kc * kAmxK, kp);
    _tile_loadd(6, panels + kc * 1024, 64);
    _tile_loadd(7, second + kc * 1024, 64);
    // Signed A bytes times unsigned B bytes, four per int32 lane, as vpdpbusd with the roles of
    // its operands swapped.
    _tile_dpbsud(0, 4, 6);
    _tile_dpbsud(1, 4, 7);
    _tile_dpbsud(2, 5, 6);
    _tile_dpbsud(3, 5, 7);
  }
  _tile_stored(0, out, 64);
  _tile_stored(1, out + 256, 64);
  _tile_stored(2, out + 512, 64);
  _tile_stored(3, out + 768, 64);
}

// Quads of K per pass of multiply_amx over a strip pair's row blocks: 128 (512 bytes of K) keep
// the pair's part of the panels (16 KiB) in L1 while every row block reads it; a K of 3072 made
// the whole pair 96 KiB, read from L2 for each block.
constexpr int64_t kAmxPassQuads = 128;

// multiply_vnni's result by AMX tiles, 32 x 32 sums at a time, K in passes of kAmxPassQuads
// quads (the sums of the earlier passes kept in thread scratch); `a` is laid out for AMX
// (signed_rows with amx: K padded to 64, 32 zero rows after the last).
[[gnu::target("amx-tile,amx-int8,avx512f,avx512bw,avx512vnni")]] void multiply_amx(
    const SignedRows& a, int64_t r0, int64_t rows, const StripSource& src, const int32_t* b0,
    int64_t j0, int64_t j1, int32_t* c, int64_t ldc) {
  const int64_t nq = a.kp / 4;  // a multiple of 16
  const int64_t blocks = (rows + 2 * kAmxRows - 1) / (2 * kAmxRows);
  alignas(64) int32_t cb_room[2 * kStrip];
  int32_t* sums =
      thread_scratch<int32_t, 3>(static_cast<size_t>(std::max<int64_t>(blocks, 1) * 1024));
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = kAmxRows;
  }
  _tile_loadconfig(&config);
  for (int64_t j = j0; j < j1; j += 2 * kStrip) {
    const int64_t valid = std::min(2 * kStrip, j1 - j);
    // A missing second strip is zeros: the block always multiplies two.
    const int32_t* cb = nullptr;
    const uint8_t* panels = strips_at(src, j, valid, 2, a.k, nq, cb_room, &cb);
    for (int64_t q0 = 0; q0 < nq; q0 += kAmxPassQuads)
      for (int64_t bi = 0; bi < blocks; ++bi)
        amx_block(a.values.get() + (r0 + bi * 2 * kAmxRows) * a.kp + 4 * q0, a.kp, 64 * nq,
                  std::min(kAmxPassQuads, nq - q0), panels + 64 * q0, sums + bi * 1024, q0 > 0);
    for (int64_t bi = 0; bi < blocks; ++bi) {
      const int64_t r = bi * 2 * kAmxRows;
      for (int64_t s = 0; s < 2; ++s) {
        const int64_t left = std::clamp<int64_t>(valid - s * kStrip, 0, kStrip);
        if (left == 0) continue;
        const __m512i cbv = _mm512_loadu_si512(cb + s * kStrip);
        const __m512i b0v = _mm512_loadu_si512(b0 + j + s * kStrip);
        for (int64_t i = 0; i < std::min<int64_t>(2 * kAmxRows, rows - r); ++i) {
          const auto row = static_cast<size_t>(r0 + r + i);
          // Row i of the block: tile (i / 16, s), row i % 16.
          const int32_t* tile_row =
              sums + bi * 1024 + (i / kAmxRows) * 512 + s * 256 + (i % kAmxRows) * kStrip;
          store_corrected(_mm512_load_si512(tile_row), a.a0[row], a.u[row], cbv, b0v,
                          c + (r + i) * ldc + j + s * kStrip, left);
        }
      }
    }
  }
  _tile_release();
}

// Asks Linux for the AMX tile data state (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA),
// which a process must do before its first tile instruction; true when granted.
bool request_amx() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr long kReqXcompPerm = 0x1023, kXtileData = 18;
  return syscall(SYS_arch_prctl, kReqXcompPerm, kXtileData) == 0;
#else
  return false;
#endif
}

using Multiply = void (*)(const SignedRows&, int64_t, int64_t, const StripSource&, const int32_t*,
                          int64_t, int64_t, int32_t*, int64_t);

}  // namespace

bool vnni_available() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vnni");
  return has;
}

// AMX-TILE and AMX-INT8 from CPUID leaf 7 (EDX bits 24 and 25): clang 14 has no "amx-*" names
// for __builtin_cpu_supports, so both compilers read the bits; the kernel's permission to use the
// tiles is request_amx's.
bool amx_available() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool tiles = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 &&
                       (edx & (1u << 24)) != 0 && (edx & (1u << 25)) != 0;
    return vnni_available() && tiles && request_amx();
  }();
  return has;
}

bool PackedB8::packs(const Tensor& b, int64_t rows, int64_t cols, IntegerKernel for_kernel) const {
  return source == b.raw() && dtype == b.dtype() && k == rows && n == cols && kernel == for_kernel;
}

size_t PackedB8::bytes() const {
  return static_cast<size_t>(64 * nq * strips) + cb.size() * sizeof(int32_t);
}

std::unique_ptr<PackedB8> pack_b_8bit(const Tensor& b, int64_t k, int64_t n, IntegerKernel kernel) {
  auto pb = std::make_unique<PackedB8>();
  const bool amx = kernel == IntegerKernel::kAmx;
  pb->source = b.raw();
  pb->dtype = b.dtype();
  pb->k = k;
  pb->n = n;
  pb->kernel = kernel;
  pb->nq = padded_k(k, amx) / 4;
  // Whole pairs of strips: multiply_amx always reads two, and both kernels read the column sums
  // and B0 of 32 columns.
  pb->strips = (n + 2 * kStrip - 1) / (2 * kStrip) * 2;
  pb->panels =
      make_aligned<uint8_t>(static_cast<size_t>(std::max<int64_t>(64 * pb->nq * pb->strips, 1)));
  pb->cb.assign(static_cast<size_t>(kStrip * pb->strips), 0);
  const uint8_t flip = b.dtype() == DType::kInt8 ? 0x80 : 0;
  for (int64_t s = 0; s < pb->strips; ++s)
    pack_strip(bytes_of(b) + std::min(n, s * kStrip), n, k, pb->nq,
               std::clamp<int64_t>(n - s * kStrip, 0, kStrip), flip,
               pb->panels.get() + 64 * pb->nq * s, pb->cb.data() + kStrip * s);
  return pb;
}

Status matmul_8bit(const Tensor& a, const Tensor& b, const std::vector<double>& a_zero,
                   const std::vector<double>& b_zero, const MatMulPlan& p, IntegerKernel kernel,
                   const PackedB8* packed, int32_t* c) {
  const int64_t nb = static_cast<int64_t>(p.a_offsets.size()), mn = p.m * p.n;
  if (nb * mn == 0) return Status::ok();
  const bool b_signed = b.dtype() == DType::kInt8;
  const bool amx = kernel == IntegerKernel::kAmx;
  const Multiply multiply = amx ? multiply_amx : multiply_vnni;
  const SignedRows as = signed_rows(bytes_of(a), a.dtype() == DType::kUint8,
                                    p.k == 0 ? 0 : a.numel() / p.k, p.k, a_zero, amx);
  if (packed && !packed->packs(b, p.k, p.n, kernel))
    return internal_error("matmul_8bit was given B packed for another matrix or kernel");
  // B0 per column (zero point + sb), and 32 more for the last tile's reads.
  std::vector<int32_t> b0(static_cast<size_t>(p.n + 2 * kStrip), 0);
  for (int64_t j = 0; j < p.n; ++j)
    b0[static_cast<size_t>(j)] =
        (b_zero.empty() ? 0 : static_cast<int32_t>(b_zero[static_cast<size_t>(j)])) +
        (b_signed ? 128 : 0);
  const uint8_t* pb = bytes_of(b);
  const uint8_t flip = b_signed ? 0x80 : 0;
  const int64_t blocks = (p.n + kBlockColumns - 1) / kBlockColumns;
  const auto product = [&](int64_t row0, int64_t rows, const uint8_t* bm, int32_t* cm) {
    const StripSource src{bm, p.n, flip, packed};
    return parallel_for_status(blocks, [&](int64_t bi) {
      ODB_RETURN_IF_ERROR(check_run_limits());
      const int64_t j0 = bi * kBlockColumns;
      multiply(as, row0, rows, src, b0.data(), j0, std::min(p.n, j0 + kBlockColumns), cm, p.n);
      return Status::ok();
    });
  };
  if (p.fold_batch) return product(0, nb * p.m, pb, c);
  for (int64_t i = 0; i < nb; ++i) {
    const auto iu = static_cast<size_t>(i);
    ODB_RETURN_IF_ERROR(
        product(p.k == 0 ? 0 : p.a_offsets[iu] / p.k, p.m, pb + p.b_offsets[iu], c + i * mn));
  }
  return Status::ok();
}

Status conv_forward_8bit(const Tensor& x, const Tensor& w, double x_zero,
                         const std::vector<double>& w_zero, IntegerKernel kernel, int32_t* y,
                         int64_t n, int64_t c, int64_t m, int64_t group, const SpatialGeometry& g,
                         const std::function<void(int64_t, int64_t, int64_t, int64_t)>& band_done) {
  const size_t nd = g.in.size();
  const int64_t cg = c / group, mg = m / group, in_size = product(g.in);
  const int64_t k = cg * product(g.kernel), p = product(g.out);
  const int64_t out_last = g.out[nd - 1], outer = p / std::max<int64_t>(out_last, 1);
  if (p == 0 || m == 0) return Status::ok();
  const bool amx = kernel == IntegerKernel::kAmx;
  const Multiply multiply = amx ? multiply_amx : multiply_vnni;
  const SignedRows ws = signed_rows(bytes_of(w), w.dtype() == DType::kUint8, m, k, w_zero, amx);
  // x's bytes as stored are packed (from x for 2-D convs, else through im2col), padding with x's
  // zero point (which becomes 0 once the zero point is subtracted, as in every other Conv path);
  // an int8 x becomes b_u when packed (flip).
  const bool x_signed = x.dtype() == DType::kInt8;
  const uint8_t* xu = bytes_of(x);
  const auto pad = static_cast<uint8_t>(static_cast<int32_t>(x_zero));
  const uint8_t flip = x_signed ? 0x80 : 0;
  const int32_t x_b0 = static_cast<int32_t>(x_zero) + (x_signed ? 128 : 0);
  const int64_t band = std::max<int64_t>(1, kBandColumns / std::max<int64_t>(out_last, 1));
  const std::vector<int32_t> b0(static_cast<size_t>(band * out_last + 2 * kStrip), x_b0);
  // A pointwise conv (1 x ... x 1 kernel, strides 1, no padding) reads x as its own column
  // matrix: rows are x's channel planes (in_size bytes apart), no im2col.
  const auto all = [](const std::vector<int64_t>& v, int64_t value) {
    return std::all_of(v.begin(), v.end(), [value](int64_t e) { return e == value; });
  };
  const bool pointwise =
      g.out == g.in && all(g.kernel, 1) && all(g.strides, 1) && all(g.pads_begin, 0);
  // A 2-D conv packs its strips straight from a padded copy of each band's input rows
  // (ConvColumns): no im2col matrix, which took a fifth of a QLinearConv CNN's run to write and
  // as much again to read back strided. Not where the copy would be larger than im2col's matrix
  // (wide strides or dilations): its size is computed in double, as hostile geometry overflows.
  const auto extent = [&](size_t d, int64_t count) {
    return static_cast<double>(count - 1) * static_cast<double>(g.strides[d]) +
           static_cast<double>(g.kernel[d] - 1) * static_cast<double>(g.dilations[d]) + 1;
  };
  const bool direct = nd == 2 && !pointwise &&
                      static_cast<double>(cg) * extent(0, band) * extent(1, out_last) <=
                          static_cast<double>(k) * static_cast<double>(band * out_last);
  // The padded copy's rows (per channel) and row length: every input a band's outputs read.
  const int64_t band_rows = direct ? static_cast<int64_t>(extent(0, band)) : 0;
  const int64_t wp = direct ? static_cast<int64_t>(extent(1, out_last)) : 0;
  std::vector<int64_t> offset;
  if (direct)
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t ki = 0; ki < g.kernel[0]; ++ki)
        for (int64_t kj = 0; kj < g.kernel[1]; ++kj)
          offset.push_back((ci * band_rows + ki * g.dilations[0]) * wp + kj * g.dilations[1]);
  return for_each_conv_band(
      n, group, outer, band, [&](int64_t bi, int64_t gi, int64_t o0, int64_t o1) {
        const uint8_t* xg = xu + (bi * c + gi * cg) * in_size;
        int32_t* yg = y + (bi * m + gi * mg) * p;
        const int64_t cols = (o1 - o0) * out_last;
        StripSource src{xg + o0 * out_last, in_size, flip, nullptr};
        ConvColumns columns;
        if (direct) {
          // Every band's copy has band_rows rows per channel (the last band reads fewer).
          columns = ConvColumns{pad_band(xg, cg, g, o0, o1, wp, pad, band_rows),
                                wp,
                                out_last,
                                g.strides[0],
                                g.strides[1],
                                o0 * out_last,
                                o0,
                                k,
                                offset.data()};
          src.conv = &columns;
        } else if (!pointwise) {
          uint8_t* col =
              thread_scratch<uint8_t, 0>(static_cast<size_t>(std::max<int64_t>(k * cols, 1)));
          im2col(xg, cg, g, o0, o1, col, pad);
          src = StripSource{col, cols, flip, nullptr};
        }
        multiply(ws, gi * mg, mg, src, b0.data(), 0, cols, yg + o0 * out_last, p);
        if (band_done) band_done(bi, gi, o0 * out_last, cols);
        return Status::ok();
      });
}

}  // namespace onnxdbg::reference
