// QLinearConv (ONNX QLinearConv-10): quantized convolution. The exact integer convolution of
// (x - x_zp) and (w - w_zp) plus the int32 bias B is rescaled by x_scale * w_scale / y_scale
// (w's scale and zero point per tensor or per output channel), rounded half to even, shifted by
// y_zp and saturated to y_zp's type. Attributes as Conv.
#include "reference/ops/quant_common.h"

namespace onnxdbg::reference {
namespace {

// out[i] = saturate(round_half_even((s[i] + add) * mul) + zero) for the sums s of one output
// plane. The AVX-512 and AVX2 clones do the same double operations eight and four at a time (no
// FMA: neither target implies -mfma, and GCC contracts nothing without it), so every clone gives
// the same bits.
#define ODB_REQUANTIZE_PLANE(S, O)                                                                \
  [[gnu::target_clones("avx512f", "avx2", "default")]] void requantize_plane(                     \
      const S* __restrict s, O* __restrict out, int64_t n, double add, double mul, double zero) { \
    for (int64_t i = 0; i < n; ++i)                                                               \
      out[i] = requantize<O>((static_cast<double>(s[i]) + add) * mul, zero);                      \
  }
ODB_REQUANTIZE_PLANE(int32_t, uint8_t)
ODB_REQUANTIZE_PLANE(int32_t, int8_t)
ODB_REQUANTIZE_PLANE(float, uint8_t)
ODB_REQUANTIZE_PLANE(float, int8_t)
ODB_REQUANTIZE_PLANE(double, uint8_t)
ODB_REQUANTIZE_PLANE(double, int8_t)
#undef ODB_REQUANTIZE_PLANE

Status q_linear_conv(KernelContext& ctx) {
  std::vector<const Tensor*> in(8);
  for (size_t i = 0; i < 8; ++i) {
    ODB_ASSIGN_OR_RETURN(in[i], ctx.required_input(i));
  }
  const Tensor &x = *in[0], &w = *in[3];
  if (!is_8bit(x.dtype()) || !is_8bit(w.dtype()) || !is_8bit(in[7]->dtype()))
    return unsupported(ctx.describe() + ": x, w and y_zero_point must be uint8 or int8");
  if (w.rank() < 1) return model_error(ctx.describe() + ": w must have rank >= 3");
  const int64_t m = w.dim(0);
  ODB_ASSIGN_OR_RETURN(auto xs, per_slice_values(ctx, in[1], 1, "x_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto xz, per_slice_values(ctx, in[2], 1, "x_zero_point"));
  ODB_ASSIGN_OR_RETURN(auto ws, per_slice_values(ctx, in[4], m, "w_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto wz, per_slice_values(ctx, in[5], m, "w_zero_point"));
  ODB_ASSIGN_OR_RETURN(auto ys, per_slice_values(ctx, in[6], 1, "y_scale", 1.0));
  ODB_ASSIGN_OR_RETURN(auto yz, per_slice_values(ctx, in[7], 1, "y_zero_point"));
  std::vector<double> bias(static_cast<size_t>(m), 0.0);
  if (const Tensor* b = ctx.input(8)) {
    if (b->dtype() != DType::kInt32 || b->numel() != m)
      return model_error(ctx.describe() + ": B must be int32 of shape [" + std::to_string(m) +
                         "], got " + std::string(dtype_name(b->dtype())) + " " +
                         shape_to_string(b->shape()));
    for (int64_t i = 0; i < m; ++i) bias[static_cast<size_t>(i)] = b->get_as_double(i);
  }
  Shape out_shape;
  ODB_ASSIGN_OR_RETURN(const IntegerSums acc, integer_conv(ctx, x, w, xz[0], wz, out_shape));
  const DType out_type = in[7]->dtype();
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, out_type, out_shape));
  const int64_t plane = y.numel() / std::max<int64_t>(out_shape[0] * m, 1);
  std::vector<double> multiplier(static_cast<size_t>(m));
  for (size_t ch = 0; ch < multiplier.size(); ++ch) multiplier[ch] = xs[0] * ws[ch] / ys[0];
  // Per (image, channel) plane: y = saturate(round_half_even((acc + bias) * multiplier) + y_zp).
  const auto emit = [&](auto* out, const auto* sums) {
    for (int64_t i0 = 0; i0 < y.numel(); i0 += plane) {
      const auto ch = static_cast<size_t>((i0 / plane) % m);
      requantize_plane(sums + i0, out + i0, plane, bias[ch], multiplier[ch], yz[0]);
    }
  };
  if (plane > 0)
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

void register_q_linear_conv(KernelRegistry& r) {
  r.add("QLinearConv", 10, q_linear_conv, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
