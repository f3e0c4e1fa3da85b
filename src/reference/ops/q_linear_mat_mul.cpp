// QLinearMatMul (ONNX QLinearMatMul-10): quantized matmul. y = saturate(round_half_even(
// sum_k (a - a_zp)(b - b_zp) * a_scale * b_scale / y_scale) + y_zp), with numpy matmul
// broadcasting; a's scale/zero point are per tensor or per row, b's per tensor or per column. The
// exact sums come from integer_matmul (float or double GEMM).
#include "reference/ops/matmul_common.h"
#include "reference/ops/quant_common.h"

namespace onnxdbg::reference {
namespace {

// out[c] = saturate(round_half_even(s[c] * a_scale * b_scale[c] / y_scale) + zero) for one row
// of sums. The AVX-512 and AVX2 clones do the same double operations eight and four at a time
// (neither target implies FMA, so GCC contracts nothing), so every clone gives the same bits.
#define ODB_REQUANTIZE_ROW(S, O)                                                                \
  [[gnu::target_clones("avx512f", "avx2", "default")]] void requantize_row(                     \
      const S* __restrict s, O* __restrict out, int64_t n, double a_scale,                      \
      const double* __restrict b_scale, double y_scale, double zero) {                          \
    for (int64_t c = 0; c < n; ++c)                                                             \
      out[c] = requantize<O>(static_cast<double>(s[c]) * a_scale * b_scale[c] / y_scale, zero); \
  }
ODB_REQUANTIZE_ROW(int32_t, uint8_t)
ODB_REQUANTIZE_ROW(int32_t, int8_t)
ODB_REQUANTIZE_ROW(float, uint8_t)
ODB_REQUANTIZE_ROW(float, int8_t)
ODB_REQUANTIZE_ROW(double, uint8_t)
ODB_REQUANTIZE_ROW(double, int8_t)
#undef ODB_REQUANTIZE_ROW

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
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output_uninitialized(ctx, out_type, p.out_shape));
  ODB_ASSIGN_OR_RETURN(const IntegerSums acc, integer_matmul(ctx, a, b, az, bz, p, 3));
  // y = saturate(round_half_even(acc * a_scale[row] * b_scale[col] / y_scale) + y_zp).
  const auto emit = [&](auto* out, const auto* sums) {
    for (int64_t i0 = 0; i0 < acc.size(); i0 += p.n)
      requantize_row(sums + i0, out + i0, p.n, as[static_cast<size_t>((i0 / p.n) % p.m)], bs.data(),
                     ys[0], yz[0]);
  };
  if (p.n > 0)
    acc.visit([&](const auto* sums) {
      if (out_type == DType::kUint8)
        emit(y.data<uint8_t>(), sums);
      else
        emit(y.data<int8_t>(), sums);
    });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_q_linear_mat_mul(KernelRegistry& r) {
  r.add("QLinearMatMul", 10, q_linear_mat_mul, HalfMode::kNative).through(21);
}

}  // namespace onnxdbg::reference
