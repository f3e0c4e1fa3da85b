// Typed wrappers over OpenBLAS (cblas_sgemm/cblas_dgemm, and ?gemv for a single row or column)
// for the reference kernels: row-major C = alpha * op(A) * op(B) + beta * C, with the checks cblas
// leaves to its caller (32-bit dims, empty matrices).
#pragma once

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "onnxdbg/status.h"
#include "reference/parallel.h"

namespace onnxdbg::reference {

/// Row-major GEMM on float or double: C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C.
/// `lda`, `ldb`, `ldc` are the row strides (in elements) of A, B and C as stored. k == 0 scales
/// C by beta. Errors: kUnsupported when a dimension exceeds the 32-bit BLAS interface.
template <class T>
Status gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
            int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return Status::ok();
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : c[i * ldc + j] * beta;
    return Status::ok();
  }
  for (int64_t d : {m, n, k, lda, ldb, ldc})
    if (d > INT_MAX)
      return unsupported("matrix dimension " + std::to_string(d) +
                         " exceeds the 32-bit BLAS interface");
  if (m == 1 || n == 1) {
    // A matrix-vector product: GEMV reads the matrix once, where GEMM would first pack it.
    // beta = 0 must not read C (it may be uninitialised), so it is zeroed first.
    if (beta == T(0))
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = T(0);
    const auto bi = [](int64_t v) { return static_cast<blasint>(v); };
    auto gemv = [&](bool trans, int64_t rows, int64_t cols, const T* mat, int64_t ld, const T* x,
                    int64_t incx, T* y, int64_t incy) {
      const auto t = trans ? CblasTrans : CblasNoTrans;
      if constexpr (std::is_same_v<T, float>) {
        cblas_sgemv(CblasRowMajor, t, bi(rows), bi(cols), alpha, mat, bi(ld), x, bi(incx), beta, y,
                    bi(incy));
      } else {
        cblas_dgemv(CblasRowMajor, t, bi(rows), bi(cols), alpha, mat, bi(ld), x, bi(incx), beta, y,
                    bi(incy));
      }
    };
    if (m == 1) {
      // C[0, :] = op(B)^T * op(A)[0, :]; B is stored k x n (or n x k when transposed).
      gemv(!trans_b, trans_b ? n : k, trans_b ? k : n, b, ldb, a, trans_a ? lda : 1, c, 1);
    } else {
      // C[:, 0] = op(A) * op(B)[:, 0]; A is stored m x k (or k x m when transposed).
      gemv(trans_a, trans_a ? k : m, trans_a ? m : k, a, lda, b, trans_b ? 1 : ldb, c, ldc);
    }
    return Status::ok();
  }
  const auto ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
  const auto im = static_cast<blasint>(m), in = static_cast<blasint>(n),
             ik = static_cast<blasint>(k);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, im, in, ik, alpha, a, static_cast<blasint>(lda), b,
                static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
  } else {
    static_assert(std::is_same_v<T, double>, "gemm supports float and double");
    cblas_dgemm(CblasRowMajor, ta, tb, im, in, ik, alpha, a, static_cast<blasint>(lda), b,
                static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
  }
  return Status::ok();
}

/// Rows and columns of C per tile of parallel_gemm.
inline constexpr int64_t kGemmRowBlock = 128;
inline constexpr int64_t kGemmColumnBlock = 1024;

/// As gemm, cut into tiles fixed by the shapes alone and run on the interpreter's threads
/// (reference/parallel.h): blocks of kGemmRowBlock rows of C when C has more rows than that, else
/// blocks of kGemmColumnBlock columns. Each element of C comes from one gemm call whose operands
/// do not depend on the thread count, so neither do its bits. Errors: as gemm (the first tile's).
template <class T>
Status parallel_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
                     const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const bool by_rows = m > kGemmRowBlock;
  const int64_t size = by_rows ? m : n, block = by_rows ? kGemmRowBlock : kGemmColumnBlock;
  const int64_t tiles = size == 0 ? 0 : (size + block - 1) / block;
  if (tiles <= 1) return gemm<T>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return parallel_for_status(tiles, [&](int64_t t) {
    const int64_t first = t * block, count = std::min(block, size - first);
    if (by_rows)  // rows of op(A): rows of A as stored, or its columns when transposed
      return gemm<T>(trans_a, trans_b, count, n, k, alpha, trans_a ? a + first : a + first * lda,
                     lda, b, ldb, beta, c + first * ldc, ldc);
    // columns of op(B): columns of B as stored, or its rows when transposed
    return gemm<T>(trans_a, trans_b, m, count, k, alpha, a, lda,
                   trans_b ? b + first * ldb : b + first, ldb, beta, c + first, ldc);
  });
}

}  // namespace onnxdbg::reference
