// conv_forward_int16 (integer_gemm.h): the convolution of ConvInteger and QLinearConv on int16
// operands (8-bit values minus zero points) with exact int32 sums, by im2col and an AVX2 kernel
// built on vpmaddwd, which multiplies pairs of int16 and adds each pair into one int32 lane.
#include "reference/ops/integer_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/run_limits.h"

namespace onnxdbg::reference {
namespace {

// Output columns per band (one im2col each) and per micro-tile, and rows per micro-tile: 6 rows
// x 16 columns keep 12 accumulators, 2 operands and a broadcast in AVX2's 16 registers.
constexpr int64_t kPairBandColumns = 4096;
constexpr int64_t kPairTileColumns = 16;
constexpr int kPairTileRows = 6;

// Packs 16 columns of the pair rows (2kk, 2kk + 1) of b (rows `ldb` apart) for pair_micro_tile: per
// pair, the two rows interleaved by unpacklo/unpackhi (which interleave within each 128-bit
// lane, so the first vector holds columns 0-3 and 8-11, the second 4-7 and 12-15), 32 int16 in
// all, one pair after the other. Reads 16 columns even past the last valid one (the caller
// pads the buffer). Packing makes pair_micro_tile's reads sequential: b's rows may be a multiple of
// 4 KiB apart, and reading them in turn would keep evicting one L1 set.
[[gnu::target("avx2")]] void pack_pair_strip(const int16_t* b, int64_t ldb, int64_t k2,
                                             int16_t* packed) {
  for (int64_t kk = 0; kk < k2; ++kk) {
    const __m256i r0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2 * kk * ldb));
    const __m256i r1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + (2 * kk + 1) * ldb));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(packed + 32 * kk),
                        _mm256_unpacklo_epi16(r0, r1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(packed + 32 * kk + 16),
                        _mm256_unpackhi_epi16(r0, r1));
  }
}

// c[r][j] = sum over pairs kk of a[r][kk] . (b[2kk][j], b[2kk+1][j]) for r < kR and the first
// `valid` of 16 columns j, from the strip pack_pair_strip packed. `a` holds each row's pairs as
// int32 (low half the even k), k2 of them per row. vpmaddwd multiplies the pairs and adds each pair
// into an int32 lane; `lo` gets columns 0-3 and 8-11 and `hi` 4-7 and 12-15, put back in order
// when stored.
template <int kR>
[[gnu::target("avx2")]] void pair_micro_tile(const int32_t* a, int64_t k2, const int16_t* packed,
                                             int32_t* c, int64_t ldc, int64_t valid) {
  __m256i lo[kR], hi[kR];
  // Unrolled, so that the accumulators live in registers (-O2 would keep them on the stack).
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
  for (int64_t kk = 0; kk < k2; ++kk) {
    const __m256i bl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(packed + 32 * kk));
    const __m256i bh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(packed + 32 * kk + 16));
#pragma GCC unroll 8
    for (int r = 0; r < kR; ++r) {
      const __m256i av = _mm256_set1_epi32(a[r * k2 + kk]);
      lo[r] = _mm256_add_epi32(lo[r], _mm256_madd_epi16(av, bl));
      hi[r] = _mm256_add_epi32(hi[r], _mm256_madd_epi16(av, bh));
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) {
    const __m256i first = _mm256_permute2x128_si256(lo[r], hi[r], 0x20);
    const __m256i second = _mm256_permute2x128_si256(lo[r], hi[r], 0x31);
    int32_t* row = c + r * ldc;
    if (valid == kPairTileColumns) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row), first);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + 8), second);
    } else {
      alignas(32) int32_t tmp[kPairTileColumns];
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), first);
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp + 8), second);
      std::memcpy(row, tmp, static_cast<size_t>(valid) * sizeof(int32_t));
    }
  }
}

using PairMicroTile = void (*)(const int32_t*, int64_t, const int16_t*, int32_t*, int64_t, int64_t);
constexpr PairMicroTile kPairMicroTiles[kPairTileRows + 1] = {nullptr,
                                                              pair_micro_tile<1>,
                                                              pair_micro_tile<2>,
                                                              pair_micro_tile<3>,
                                                              pair_micro_tile<4>,
                                                              pair_micro_tile<5>,
                                                              pair_micro_tile<6>};

// Rows of an int16 matrix [rows, k] as pairs of int16 in one int32 (the even k in the low half),
// an odd k's last pair completed by 0: pair_micro_tile's `a`.
std::vector<int32_t> pack_pairs(const int16_t* w, int64_t rows, int64_t k) {
  const int64_t k2 = (k + 1) / 2;
  std::vector<int32_t> pairs(static_cast<size_t>(rows * k2));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kk = 0; kk < k2; ++kk) {
      const auto lo = static_cast<uint16_t>(w[r * k + 2 * kk]);
      const auto hi = static_cast<uint16_t>(2 * kk + 1 < k ? w[r * k + 2 * kk + 1] : 0);
      pairs[static_cast<size_t>(r * k2 + kk)] =
          static_cast<int32_t>(static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16));
    }
  return pairs;
}

// c[r][j] = sum_k a[r][k] b[k][j] for r < rows and j in [j0, j1): `pairs` is pack_pairs of a,
// b's rows are ldb apart and must be readable for 2 * k2 rows and 16 elements past column j1 - 1
// of the last one; c's rows are ldc apart.
void multiply_strips(const int32_t* pairs, int64_t rows, int64_t k2, const int16_t* b, int64_t ldb,
                     int64_t j0, int64_t j1, int32_t* c, int64_t ldc) {
  int16_t* packed = thread_scratch<int16_t, 1>(static_cast<size_t>(32 * std::max<int64_t>(k2, 1)));
  for (int64_t j = j0; j < j1; j += kPairTileColumns) {
    const int64_t valid = std::min(kPairTileColumns, j1 - j);
    pack_pair_strip(b + j, ldb, k2, packed);
    for (int64_t r0 = 0; r0 < rows; r0 += kPairTileRows) {
      const auto tile_rows = static_cast<int>(std::min<int64_t>(kPairTileRows, rows - r0));
      kPairMicroTiles[tile_rows](pairs + r0 * k2, k2, packed, c + r0 * ldc + j, ldc, valid);
    }
  }
}

}  // namespace

namespace {
std::atomic<IntegerKernel> kernel_limit{IntegerKernel::kAmx};
}  // namespace

const char* integer_kernel_name(IntegerKernel kernel) {
  switch (kernel) {
    case IntegerKernel::kBlas:
      return "blas";
    case IntegerKernel::kInt16Avx2:
      return "int16-avx2";
    case IntegerKernel::kVnni512:
      return "vnni512";
    case IntegerKernel::kAmx:
      return "amx";
  }
  return "?";
}

std::vector<IntegerKernel> integer_kernels_available() {
  static const std::vector<IntegerKernel> available = [] {
    std::vector<IntegerKernel> v{IntegerKernel::kBlas};
    if (__builtin_cpu_supports("avx2")) v.push_back(IntegerKernel::kInt16Avx2);
    if (vnni_available()) v.push_back(IntegerKernel::kVnni512);
    if (amx_available()) v.push_back(IntegerKernel::kAmx);
    return v;
  }();
  return available;
}

IntegerKernel integer_kernel() {
  // ONNXDBG_INTEGER_KERNEL=blas|int16-avx2|vnni512|amx caps the choice, to time one kernel
  // against another (bench/quant.sh); unknown names are ignored.
  static const IntegerKernel best = [] {
    IntegerKernel b = integer_kernels_available().back();
    if (const char* env = std::getenv("ONNXDBG_INTEGER_KERNEL"))
      for (IntegerKernel k : integer_kernels_available())
        if (std::strcmp(env, integer_kernel_name(k)) == 0) b = k;
    return b;
  }();
  return std::min(best, kernel_limit.load(std::memory_order_relaxed));
}

void set_integer_kernel_limit(IntegerKernel limit) { kernel_limit.store(limit); }

Status conv_forward_int16(const int16_t* x, const int16_t* w, int32_t* y, int64_t n, int64_t c,
                          int64_t m, int64_t group, const SpatialGeometry& g) {
  const size_t nd = g.in.size();
  const int64_t cg = c / group, mg = m / group, in_size = product(g.in);
  const int64_t k = cg * product(g.kernel), k2 = (k + 1) / 2, p = product(g.out);
  const int64_t out_last = g.out[nd - 1], outer = p / std::max<int64_t>(out_last, 1);
  if (p == 0 || m == 0) return Status::ok();
  const std::vector<int32_t> pairs = pack_pairs(w, m, k);
  // Bands of whole output rows (the outer index), about kPairBandColumns columns each: fixed by the
  // shapes, so the tiles, and the (exact) sums, do not depend on the thread count.
  const int64_t band = std::max<int64_t>(1, kPairBandColumns / std::max<int64_t>(out_last, 1));
  return for_each_conv_band(
      n, group, outer, band, [&](int64_t b, int64_t gi, int64_t o0, int64_t o1) {
        const int16_t* xg = x + (b * c + gi * cg) * in_size;
        const int32_t* wg = pairs.data() + gi * mg * k2;
        int32_t* yg = y + (b * m + gi * mg) * p;
        const int64_t cols = (o1 - o0) * out_last;
        // k rows of im2col, a zero row completing an odd k's last pair, and a tile's width more so
        // that the last tile's 16-column reads stay inside the buffer.
        int16_t* col =
            thread_scratch<int16_t, 0>(static_cast<size_t>((2 * k2) * cols + kPairTileColumns));
        im2col(xg, cg, g, o0, o1, col);
        std::fill(col + k * cols, col + 2 * k2 * cols + kPairTileColumns, int16_t{0});
        multiply_strips(wg, mg, k2, col, cols, 0, cols, yg + o0 * out_last, p);
        return Status::ok();
      });
}

}  // namespace onnxdbg::reference

namespace onnxdbg::reference {

Status gemm_int16(const int16_t* a, int64_t m, int64_t k, const int16_t* b, int64_t n, int32_t* c) {
  if (m == 0 || n == 0) return Status::ok();
  const std::vector<int32_t> pairs = pack_pairs(a, m, k);
  const int64_t k2 = (k + 1) / 2;
  // Blocks of kBlockColumns columns, fixed by the shapes; each thread packs its own strips.
  constexpr int64_t kBlockColumns = 256;
  return parallel_for_status((n + kBlockColumns - 1) / kBlockColumns, [&](int64_t bi) {
    ODB_RETURN_IF_ERROR(check_run_limits());
    const int64_t j0 = bi * kBlockColumns;
    multiply_strips(pairs.data(), m, k2, b, n, j0, std::min(n, j0 + kBlockColumns), c, n);
    return Status::ok();
  });
}

}  // namespace onnxdbg::reference
