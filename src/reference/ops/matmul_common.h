// Shape rules of numpy-style matrix multiplication shared by MatMul and MatMulInteger (ONNX
// MatMul spec: 1-D operands are promoted and the promoted dim removed again, batch dims broadcast).
#pragma once

#include <string>
#include <vector>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/blas.h"

namespace onnxdbg::reference {

/// One MatMul as a list of (M x K) * (K x N) products: batch b multiplies the matrix at element
/// offset a_offsets[b] of A with the one at b_offsets[b] of B into output matrix b.
struct MatMulPlan {
  Shape out_shape;
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> a_offsets, b_offsets;
  /// True when B is one matrix shared by every batch and A's matrices are contiguous, so the
  /// whole product is a single (batch*M) x K by K x N product.
  bool fold_batch = false;
};

/// Plans A (shape `a`) times B (shape `b`). Errors: kModelError naming the node and both shapes for
/// scalars, mismatched inner dims, or batch dims that do not broadcast.
inline Expected<MatMulPlan> plan_matmul(const KernelContext& ctx, const Shape& a, const Shape& b) {
  // Both shapes for error messages, built only for one (not on every run).
  const auto shapes = [&] {
    return " (A " + shape_to_string(a) + ", B " + shape_to_string(b) + ")";
  };
  if (a.empty() || b.empty())
    return model_error(ctx.describe() + ": MatMul operands must have rank >= 1" + shapes());
  Shape a2 = a, b2 = b;
  if (a2.size() == 1) a2.insert(a2.begin(), 1);
  if (b2.size() == 1) b2.push_back(1);
  MatMulPlan p;
  p.m = a2[a2.size() - 2];
  p.k = a2.back();
  p.n = b2.back();
  if (b2[b2.size() - 2] != p.k)
    return model_error(ctx.describe() + ": inner dimensions differ: A has " + std::to_string(p.k) +
                       " columns, B has " + std::to_string(b2[b2.size() - 2]) + " rows" + shapes());
  Shape ab(a2.begin(), a2.end() - 2), bb(b2.begin(), b2.end() - 2);
  auto batch = broadcast_shapes({ab, bb});
  if (!batch) return model_error(ctx.describe() + ": batch dimensions do not broadcast" + shapes());
  p.out_shape = *batch;
  if (a.size() > 1) p.out_shape.push_back(p.m);
  if (b.size() > 1) p.out_shape.push_back(p.n);
  int64_t nb = 1;
  for (int64_t d : *batch) nb *= d;
  p.a_offsets.reserve(static_cast<size_t>(nb));
  p.b_offsets.reserve(static_cast<size_t>(nb));
  for_each_broadcast(*batch, {broadcast_strides(ab, *batch), broadcast_strides(bb, *batch)},
                     [&](int64_t, const int64_t* o) {
                       p.a_offsets.push_back(o[0] * p.m * p.k);
                       p.b_offsets.push_back(o[1] * p.k * p.n);
                     });
  if (batch->empty()) {
    p.a_offsets = {0};
    p.b_offsets = {0};
  }
  p.fold_batch = true;
  for (size_t i = 0; i < p.a_offsets.size() && p.fold_batch; ++i)
    p.fold_batch = p.b_offsets[i] == 0 && p.a_offsets[i] == static_cast<int64_t>(i) * p.m * p.k;
  return p;
}

/// The products of plan p on float or double operands by BLAS GEMM (y: p.out_shape's elements),
/// in tiles fixed by the shapes (blas.h's parallel_gemm): of the folded GEMM, else one batch
/// entry each. Errors: gemm's.
template <class T>
Status blas_matmul(const MatMulPlan& p, const T* a, const T* b, T* y) {
  const int64_t nb = static_cast<int64_t>(p.a_offsets.size()), mn = p.m * p.n;
  if (p.fold_batch)
    return parallel_gemm<T>(false, false, nb * p.m, p.n, p.k, T(1), a, p.k, b, p.n, T(0), y, p.n);
  return parallel_for_status(nb, [&](int64_t i) {
    const auto iu = static_cast<size_t>(i);
    return gemm<T>(false, false, p.m, p.n, p.k, T(1), a + p.a_offsets[iu], p.k, b + p.b_offsets[iu],
                   p.n, T(0), y + i * mn, p.n);
  });
}

}  // namespace onnxdbg::reference
