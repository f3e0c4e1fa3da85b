// Gemm (ONNX Gemm-1 ... Gemm-13): Y = alpha * op(A) * op(B) + beta * C with transA/transB and an
// optional C broadcast to M x N; float and double through BLAS, float16 through float32 BLAS on
// its own float32 copies of the operands (B's kept from run to run when it is a weight) rounded
// once, integer types through a loop.
#include <vector>

#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/blas.h"
#include "reference/ops/data_movement.h"
#include "reference/ops/float16_operands.h"

namespace onnxdbg::reference {
namespace {

// The node's attributes and its operands' shapes, checked.
struct GemmShape {
  bool ta = false, tb = false;
  double alpha = 1, beta = 1;
  int64_t m = 0, n = 0, k = 0;
};

Expected<GemmShape> gemm_shape(KernelContext& ctx, const Tensor& a, const Tensor& b,
                               const Tensor* c) {
  GemmShape s;
  s.ta = ctx.attr_int("transA", 0) != 0, s.tb = ctx.attr_int("transB", 0) != 0;
  s.alpha = ctx.attr_float("alpha", 1.0f), s.beta = ctx.attr_float("beta", 1.0f);
  // The operands' shapes for error messages, built only for one (not on every run).
  const auto shapes = [&] {
    return " (A " + shape_to_string(a.shape()) + (s.ta ? " transposed" : "") + ", B " +
           shape_to_string(b.shape()) + (s.tb ? " transposed" : "") +
           (c ? ", C " + shape_to_string(c->shape()) : std::string()) + ")";
  };
  if (a.rank() != 2 || b.rank() != 2)
    return model_error(ctx.describe() + ": A and B must be 2-D" + shapes());
  s.m = s.ta ? a.dim(1) : a.dim(0), s.k = s.ta ? a.dim(0) : a.dim(1);
  const int64_t kb = s.tb ? b.dim(1) : b.dim(0);
  s.n = s.tb ? b.dim(0) : b.dim(1);
  if (s.k != kb)
    return model_error(ctx.describe() + ": inner dimensions differ (" + std::to_string(s.k) +
                       " vs " + std::to_string(kb) + ")" + shapes());
  if (c) {
    if (c->dtype() != a.dtype())
      return model_error(ctx.describe() + ": C is " + std::string(dtype_name(c->dtype())) +
                         " but A is " + std::string(dtype_name(a.dtype())));
    auto bs = broadcast_shapes({c->shape(), {s.m, s.n}});
    if (c->rank() > 2 || !bs || *bs != Shape{s.m, s.n})
      return model_error(ctx.describe() + ": C does not broadcast to " +
                         shape_to_string({s.m, s.n}) + shapes());
  }
  return s;
}

// py [m x n] = alpha * op(pa) * op(pb) + beta * pc (pc: c's values, broadcast; null for no C),
// for A and B stored as a and b.
template <class T>
Status gemm_values(const GemmShape& s, const Tensor& a, const Tensor& b, const Tensor* c,
                   const T* pa, const T* pb, const T* pc, T* py) {
  const int64_t m = s.m, n = s.n, k = s.k;
  if (c)
    for_each_broadcast({m, n}, {broadcast_strides(c->shape(), {m, n})},
                       [&](int64_t i, const int64_t* o) {
                         py[i] = static_cast<T>(static_cast<double>(pc[o[0]]) * s.beta);
                       });
  if constexpr (std::is_floating_point_v<T>) {
    return parallel_gemm<T>(s.ta, s.tb, m, n, k, static_cast<T>(s.alpha), pa, a.dim(1), pb,
                            b.dim(1), c ? T(1) : T(0), py, n);
  } else {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T acc = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc = static_cast<T>(acc + pa[s.ta ? kk * m + i : i * k + kk] *
                                         pb[s.tb ? j * k + kk : kk * n + j]);
        py[i * n + j] =
            static_cast<T>(py[i * n + j] + static_cast<T>(s.alpha * static_cast<double>(acc)));
      }
    return Status::ok();
  }
}

template <class T>
Status gemm_typed(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* c) {
  ODB_ASSIGN_OR_RETURN(const GemmShape s, gemm_shape(ctx, a, b, c));
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(a.dtype(), {s.m, s.n}));
  ODB_RETURN_IF_ERROR(gemm_values<T>(s, a, b, c, a.data<T>(), b.data<T>(),
                                     c ? c->data<T>() : nullptr, y.data<T>()));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// float16 A, B and C: the float32 Gemm of their exact float32 values, rounded once to float16
// (the interpreter's float32 path, bit for bit, without its whole-tensor casts of B per run).
Status gemm_float16(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* c) {
  ODB_ASSIGN_OR_RETURN(const GemmShape s, gemm_shape(ctx, a, b, c));
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output_uninitialized(ctx, DType::kFloat16, {s.m, s.n}));
  std::vector<float> a_values, b_values, c_values, sums(static_cast<size_t>(y.numel()));
  const float* pb = float32_values(ctx, b, 1, b_values);  // B first: the one kept
  const float* pa = float32_values(ctx, a, 0, a_values);
  const float* pc = c ? float32_values(ctx, *c, 2, c_values) : nullptr;
  ODB_RETURN_IF_ERROR(gemm_values<float>(s, a, b, c, pa, pb, pc, sums.data()));
  float_to_float16(sums.data(), reinterpret_cast<uint16_t*>(y.raw()), sums.size());
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status gemm_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* a, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* b, ctx.required_input(1));
  if (a->dtype() != b->dtype())
    return model_error(ctx.describe() + ": A is " + std::string(dtype_name(a->dtype())) +
                       " but B is " + std::string(dtype_name(b->dtype())));
  if (a->dtype() == DType::kFloat16) return gemm_float16(ctx, *a, *b, ctx.input(2));
  return visit_numeric(a->dtype(), "Gemm", [&](auto tag) {
    return gemm_typed<decltype(tag)>(ctx, *a, *b, ctx.input(2));
  });
}

}  // namespace

void register_gemm(KernelRegistry& r) {
  for (int v : {1, 6, 7, 9, 11, 13})
    r.add("Gemm", v, gemm_kernel, HalfMode::kNativeFloat16).accumulates_in_double();
}

}  // namespace onnxdbg::reference
