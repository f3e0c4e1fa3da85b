// Dropout (ONNX versions 1, 6, 7, 10, 12, 13). At inference the output is the input and the
// optional mask is all true (bool from version 10, the input's type before). Training mode
// (training_mode = true from version 12) is random: it runs only with a ratio of 0 or an explicit
// `seed`, drawing the mask like ONNX's reference (numpy's MT19937 seeded with `seed`).
#include <random>

#include "reference/kernel.h"
#include "reference/kernel_util.h"

namespace onnxdbg::reference {
namespace {

// Keeps x[i] / (1 - ratio) where u_i >= ratio, u_i being numpy's legacy uniform doubles
// (RandomState(seed).random_sample: two MT19937 words, 53 bits) in row-major order. Without a
// seed the spec asks for an auto-generated one, which nothing could reproduce.
Status training_dropout(KernelContext& ctx, const Tensor& x, double ratio) {
  if (!ctx.has_attr("seed"))
    return unsupported(ctx.describe() + ": Dropout in training mode (ratio " +
                       std::to_string(ratio) +
                       ") without a seed attribute drops random elements; the reference "
                       "interpreter only reproduces seeded dropout");
  if (ratio < 0 || ratio >= 1)
    return model_error(ctx.describe() + ": ratio must be in [0, 1), got " + std::to_string(ratio));
  std::mt19937 gen(static_cast<uint32_t>(ctx.attr_int("seed", 0)));
  const double scale = 1.0 / (1.0 - ratio);
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), x.shape()));
  ODB_ASSIGN_OR_RETURN(Tensor mask, Tensor::make(DType::kBool, x.shape()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const uint32_t a = gen() >> 5, b = gen() >> 6;
    const bool keep = (a * 67108864.0 + b) / 9007199254740992.0 >= ratio;
    y.set_from_double(i, keep ? x.get_as_double(i) * scale : 0.0);
    mask.data<bool>()[i] = keep;
  }
  ctx.set_output(0, std::move(y));
  if (ctx.output_requested(1)) ctx.set_output(1, std::move(mask));
  return Status::ok();
}

Status dropout(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (ctx.opset() >= 12) {
    double ratio = 0.5;
    if (const Tensor* r = ctx.input(1)) {
      if (r->numel() != 1 || !is_floating(r->dtype()))
        return model_error(ctx.describe() + ": ratio must be a floating-point scalar, got " +
                           std::string(dtype_name(r->dtype())) + " of shape " +
                           shape_to_string(r->shape()));
      ratio = r->get_as_double(0);
    }
    bool training = false;
    if (const Tensor* t = ctx.input(2)) {
      if (t->numel() != 1)
        return model_error(ctx.describe() + ": training_mode must be a scalar, got shape " +
                           shape_to_string(t->shape()));
      training = t->get_as_double(0) != 0;
    }
    if (training && ratio != 0) return training_dropout(ctx, *x, ratio);
  }
  if (ctx.output_requested(1)) {
    const DType mask_type = ctx.opset() >= 10 ? DType::kBool : x->dtype();
    ODB_ASSIGN_OR_RETURN(Tensor mask, Tensor::make(mask_type, x->shape()));
    for (int64_t i = 0; i < mask.numel(); ++i) mask.set_from_double(i, 1.0);
    ctx.set_output(1, std::move(mask));
  }
  ctx.set_output(0, *x);
  return Status::ok();
}

}  // namespace

void register_dropout(KernelRegistry& r) {
  for (int v : {1, 6, 7, 10, 12}) r.add("Dropout", v, dropout, HalfMode::kNative);
  r.add("Dropout", 13, dropout, HalfMode::kNative).through(22);
}

}  // namespace onnxdbg::reference
