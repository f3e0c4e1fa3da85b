// MatMul (ONNX MatMul-1, -9, -13): numpy matmul with 1-D promotion and batch broadcasting; float
// and double go through BLAS GEMM, float16 through float32 GEMM on its own float32 copies of the
// operands (the weights' kept from run to run) rounded once, integer types through a plain loop.
#include <vector>

#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/data_movement.h"
#include "reference/ops/float16_operands.h"
#include "reference/ops/matmul_common.h"

namespace onnxdbg::reference {
namespace {

// float16 A and B: the float32 GEMM of their exact float32 values, rounded once to float16 (the
// interpreter's float32 path, bit for bit, without its whole-tensor casts of B on every run).
Status matmul_float16(KernelContext& ctx, const Tensor& a, const Tensor& b) {
  ODB_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul(ctx, a.shape(), b.shape()));
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output_uninitialized(ctx, DType::kFloat16, p.out_shape));
  std::vector<float> a_values, b_values, sums(static_cast<size_t>(y.numel()));
  const float* pb = float32_values(ctx, b, 1, b_values);  // B first: the one kept, if both are
  const float* pa = float32_values(ctx, a, 0, a_values);
  ODB_RETURN_IF_ERROR(blas_matmul<float>(p, pa, pb, sums.data()));
  float_to_float16(sums.data(), reinterpret_cast<uint16_t*>(y.raw()), sums.size());
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

template <class T>
Status matmul_typed(KernelContext& ctx, const Tensor& a, const Tensor& b) {
  ODB_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul(ctx, a.shape(), b.shape()));
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(a.dtype(), p.out_shape));
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* py = y.data<T>();
  const int64_t nb = static_cast<int64_t>(p.a_offsets.size()), mn = p.m * p.n;
  if constexpr (std::is_floating_point_v<T>) {
    ODB_RETURN_IF_ERROR(blas_matmul<T>(p, pa, pb, py));
  } else {
    for (int64_t i = 0; i < nb; ++i) {
      const T* ma = pa + p.a_offsets[static_cast<size_t>(i)];
      const T* mb = pb + p.b_offsets[static_cast<size_t>(i)];
      T* my = py + i * mn;
      for (int64_t r = 0; r < p.m; ++r)
        for (int64_t kk = 0; kk < p.k; ++kk) {
          const T av = ma[r * p.k + kk];
          for (int64_t col = 0; col < p.n; ++col)
            my[r * p.n + col] = static_cast<T>(my[r * p.n + col] + av * mb[kk * p.n + col]);
        }
    }
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status matmul(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* a, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* b, ctx.required_input(1));
  if (a->dtype() != b->dtype())
    return model_error(ctx.describe() + ": A is " + std::string(dtype_name(a->dtype())) +
                       " but B is " + std::string(dtype_name(b->dtype())));
  if (a->dtype() == DType::kFloat16) return matmul_float16(ctx, *a, *b);
  return visit_numeric(a->dtype(), "MatMul",
                       [&](auto tag) { return matmul_typed<decltype(tag)>(ctx, *a, *b); });
}

}  // namespace

void register_mat_mul(KernelRegistry& r) {
  for (int v : {1, 9, 13})
    r.add("MatMul", v, matmul, HalfMode::kNativeFloat16).accumulates_in_double();
}

}  // namespace onnxdbg::reference
