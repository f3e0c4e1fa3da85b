// QLinearMatMul (ONNX QLinearMatMul-10): quantized matmul. y = saturate(round_half_even(
// sum_k (a - a_zp)(b - b_zp) * a_scale * b_scale / y_scale) + y_zp), with numpy matmul
// broadcasting; a's scale/zero point are per tensor or per row, b's per tensor or per column.
#include "reference/ops/matmul_common.h"
#include "reference/ops/quant_common.h"

namespace onnxdbg::reference {
namespace {

Status q_linear_mat_mul(KernelContext& ctx) {
  std::vector<const Tensor*> in(8);
  for (size_t i = 0; i < 8; ++i) {
    ODB_ASSIGN_OR_RETURN(in[i], ctx.required_input(i));
  }
  const Tensor &a = *in[0], &b = *in[3];
  if (!is_8bit(a.dtype()) || !is_8bit(b.dtype()) || !is_8bit(in[7]->dtype()))
    return unsupported(ctx.describe() + ": a, b and y_zero_point must be uint8 or int8");
  ODB_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul(ctx, a.shape(), b.shape()));
  ODB_ASSIGN_OR_RETURN(auto as, per_slice_values(ctx, in[1], p.m, "a_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto az, per_slice_values(ctx, in[2], p.m, "a_zero_point"));
  ODB_ASSIGN_OR_RETURN(auto bs, per_slice_values(ctx, in[4], p.n, "b_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto bz, per_slice_values(ctx, in[5], p.n, "b_zero_point"));
  ODB_ASSIGN_OR_RETURN(auto ys, per_slice_values(ctx, in[6], 1, "y_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto yz, per_slice_values(ctx, in[7], 1, "y_zero_point"));
  const DType out_type = in[7]->dtype();
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, out_type, p.out_shape));
  for (size_t i = 0; i < p.a_offsets.size(); ++i)
    for (int64_t r = 0; r < p.m; ++r)
      for (int64_t c = 0; c < p.n; ++c) {
        double acc = 0;
        for (int64_t k = 0; k < p.k; ++k)
          acc += (a.get_as_double(p.a_offsets[i] + r * p.k + k) - az[static_cast<size_t>(r)]) *
                 (b.get_as_double(p.b_offsets[i] + k * p.n + c) - bz[static_cast<size_t>(c)]);
        const double v = acc * as[static_cast<size_t>(r)] * bs[static_cast<size_t>(c)] / ys[0];
        y.set_from_double((static_cast<int64_t>(i) * p.m + r) * p.n + c,
                          saturate_round(std::nearbyint(v) + yz[0], out_type));
      }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_q_linear_mat_mul(KernelRegistry& r) {
  r.add("QLinearMatMul", 10, q_linear_mat_mul, HalfMode::kNative).through(21);
}

}  // namespace onnxdbg::reference
