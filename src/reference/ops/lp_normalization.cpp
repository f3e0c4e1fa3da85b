// LpNormalization: x divided by its L1 or L2 norm along `axis` (default -1), p in {1, 2} (default
// 2) (LpNormalization-1; 22 adds bfloat16). Norms accumulate in double. A vector of zero norm
// stays 0 (not 0 / 0 = NaN), as the ONNX test data and ONNX Runtime have it; the spec says nothing
// of that case.
#include <cmath>

#include "reference/kernel.h"
#include "reference/kernel_util.h"

namespace onnxdbg::reference {
namespace {

Status lp_normalization_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t p = ctx.attr_int("p", 2);
  if (p != 1 && p != 2)
    return model_error(ctx.describe() + ": attribute p must be 1 or 2, got " + std::to_string(p));
  if (x->rank() == 0) return model_error(ctx.describe() + " needs an input of rank >= 1");
  ODB_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx.attr_int("axis", -1), x->rank()));
  int64_t outer = 1, len = x->dim(axis), inner = 1;
  for (int64_t d = 0; d < x->rank(); ++d) {
    if (d < axis) outer *= x->dim(d);
    if (d > axis) inner *= x->dim(d);
  }
  return visit_float(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make_uninitialized(x->dtype(), x->shape()));
    const T* px = x->data<T>();
    T* po = out.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < inner; ++in) {
        const int64_t base = o * len * inner + in;
        double norm = 0;
        for (int64_t k = 0; k < len; ++k) {
          const double v = static_cast<double>(px[base + k * inner]);
          norm += p == 1 ? std::abs(v) : v * v;
        }
        if (p == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < len; ++k)
          po[base + k * inner] =
              norm == 0 ? T(0) : static_cast<T>(static_cast<double>(px[base + k * inner]) / norm);
      }
    }
    ctx.set_output(0, std::move(out));
    return Status::ok();
  });
}

}  // namespace

void register_lp_normalization(KernelRegistry& r) {
  r.add("LpNormalization", 1, lp_normalization_kernel).accumulates_in_double();
  r.add("LpNormalization", 22, lp_normalization_kernel).accumulates_in_double();
}

}  // namespace onnxdbg::reference
