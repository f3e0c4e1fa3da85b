// Bernoulli (ONNX Bernoulli-15): y[i] = 1 with probability x[i], else 0, of attribute `dtype`
// (default the input's type); seeded like ONNX's reference, numpy's binomial(1, p)
// (random_common.h). Probabilities outside [0, 1] are an error.
#include "reference/ops/random_common.h"

namespace onnxdbg::reference {
namespace {

Status bernoulli(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (!is_floating(x->dtype()))
    return model_error(ctx.describe() + ": input must be floating point, got " +
                       std::string(dtype_name(x->dtype())));
  DType t = x->dtype();
  if (ctx.has_attr("dtype")) {
    auto d = dtype_from_onnx(static_cast<int32_t>(ctx.attr_int("dtype", 1)));
    if (!d || !(is_floating(*d) || is_integer(*d) || *d == DType::kBool))
      return model_error(ctx.describe() + ": dtype " + std::to_string(ctx.attr_int("dtype", 1)) +
                         " is not numeric");
    t = *d;
  }
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, t, x->shape()));
  auto rs = NumpyRandomState::for_node(ctx);
  for (int64_t i = 0; i < x->numel(); ++i) {
    const double p = x->get_as_double(i);
    if (!(p >= 0 && p <= 1))
      return model_error(ctx.describe() + ": probability " + std::to_string(p) + " at position " +
                         std::to_string(i) + " is outside [0, 1]");
    y.set_from_double(i, rs.bernoulli(p));
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_bernoulli(KernelRegistry& r) {
  r.add("Bernoulli", 15, bernoulli, HalfMode::kNative).through(22);
}

}  // namespace onnxdbg::reference
