// Gemm (ONNX Gemm-1 ... Gemm-13): Y = alpha * op(A) * op(B) + beta * C with transA/transB and an
// optional C broadcast to M x N; float and double through BLAS, integer types through a loop.
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/blas.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status gemm_typed(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* c) {
  const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  const double alpha = ctx.attr_float("alpha", 1.0f), beta = ctx.attr_float("beta", 1.0f);
  // The operands' shapes for error messages, built only for one (not on every run).
  const auto shapes = [&] {
    return " (A " + shape_to_string(a.shape()) + (ta ? " transposed" : "") + ", B " +
           shape_to_string(b.shape()) + (tb ? " transposed" : "") +
           (c ? ", C " + shape_to_string(c->shape()) : std::string()) + ")";
  };
  if (a.rank() != 2 || b.rank() != 2)
    return model_error(ctx.describe() + ": A and B must be 2-D" + shapes());
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t kb = tb ? b.dim(1) : b.dim(0), n = tb ? b.dim(0) : b.dim(1);
  if (k != kb)
    return model_error(ctx.describe() + ": inner dimensions differ (" + std::to_string(k) + " vs " +
                       std::to_string(kb) + ")" + shapes());
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(a.dtype(), {m, n}));
  T* py = y.data<T>();
  if (c) {
    if (c->dtype() != a.dtype())
      return model_error(ctx.describe() + ": C is " + std::string(dtype_name(c->dtype())) +
                         " but A is " + std::string(dtype_name(a.dtype())));
    auto bs = broadcast_shapes({c->shape(), {m, n}});
    if (c->rank() > 2 || !bs || *bs != Shape{m, n})
      return model_error(ctx.describe() + ": C does not broadcast to " + shape_to_string({m, n}) +
                         shapes());
    const T* pc = c->data<T>();
    for_each_broadcast({m, n}, {broadcast_strides(c->shape(), {m, n})},
                       [&](int64_t i, const int64_t* o) {
                         py[i] = static_cast<T>(static_cast<double>(pc[o[0]]) * beta);
                       });
  }
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  if constexpr (std::is_floating_point_v<T>) {
    ODB_RETURN_IF_ERROR(parallel_gemm<T>(ta, tb, m, n, k, static_cast<T>(alpha), pa, a.dim(1), pb,
                                         b.dim(1), c ? T(1) : T(0), py, n));
  } else {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T acc = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc = static_cast<T>(acc +
                               pa[ta ? kk * m + i : i * k + kk] * pb[tb ? j * k + kk : kk * n + j]);
        py[i * n + j] =
            static_cast<T>(py[i * n + j] + static_cast<T>(alpha * static_cast<double>(acc)));
      }
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status gemm_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* a, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* b, ctx.required_input(1));
  if (a->dtype() != b->dtype())
    return model_error(ctx.describe() + ": A is " + std::string(dtype_name(a->dtype())) +
                       " but B is " + std::string(dtype_name(b->dtype())));
  return visit_numeric(a->dtype(), "Gemm", [&](auto tag) {
    return gemm_typed<decltype(tag)>(ctx, *a, *b, ctx.input(2));
  });
}

}  // namespace

void register_gemm(KernelRegistry& r) {
  for (int v : {1, 6, 7, 9, 11, 13}) r.add("Gemm", v, gemm_kernel).accumulates_in_double();
}

}  // namespace onnxdbg::reference
