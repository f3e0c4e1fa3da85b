// MatMulInteger (ONNX MatMulInteger-10): int32 = (A - a_zero_point) x (B - b_zero_point) for
// int8/uint8 operands with numpy matmul broadcasting; zero points are scalars, per row of A or per
// column of B. The exact sums come from integer_matmul (float or double GEMM).
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/integer_gemm.h"
#include "reference/ops/matmul_common.h"

namespace onnxdbg::reference {
namespace {

// Zero points as one value per row (for A, `count` = M) or per column (for B, `count` = N).
Expected<std::vector<double>> zero_points(const KernelContext& ctx, const Tensor* zp,
                                          const Tensor& operand, int64_t count, const char* name) {
  std::vector<double> v(static_cast<size_t>(count), 0);
  if (!zp) return v;
  if (zp->dtype() != operand.dtype() || (zp->numel() != 1 && zp->numel() != count))
    return model_error(ctx.describe() + ": " + name + " must be a scalar or hold " +
                       std::to_string(count) + " values of the operand's type, got " +
                       std::string(dtype_name(zp->dtype())) + " of shape " +
                       shape_to_string(zp->shape()));
  for (int64_t i = 0; i < count; ++i)
    v[static_cast<size_t>(i)] = zp->get_as_double(zp->numel() == 1 ? 0 : i);
  return v;
}

Status mat_mul_integer(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* a, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* b, ctx.required_input(1));
  for (const Tensor* t : {a, b})
    if (t->dtype() != DType::kInt8 && t->dtype() != DType::kUint8)
      return unsupported(ctx.describe() + ": MatMulInteger takes int8 or uint8, got " +
                         std::string(dtype_name(t->dtype())));
  ODB_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul(ctx, a->shape(), b->shape()));
  ODB_ASSIGN_OR_RETURN(auto za, zero_points(ctx, ctx.input(2), *a, p.m, "a_zero_point"));
  ODB_ASSIGN_OR_RETURN(auto zb, zero_points(ctx, ctx.input(3), *b, p.n, "b_zero_point"));
  ODB_ASSIGN_OR_RETURN(IntegerSums acc, integer_matmul(ctx, *a, *b, za, zb, p, 1));
  ODB_ASSIGN_OR_RETURN(Tensor y, std::move(acc).into_int32_tensor(ctx, p.out_shape));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_mat_mul_integer(KernelRegistry& r) {
  r.add("MatMulInteger", 10, mat_mul_integer, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
