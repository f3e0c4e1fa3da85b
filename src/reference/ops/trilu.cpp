// Trilu (ONNX Trilu-14): keeps the upper (default) or lower triangle of the last two dimensions,
// shifted by diagonal offset k (optional scalar input); other elements become zero.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status trilu(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->rank() < 2)
    return model_error(ctx.describe() + " needs rank >= 2, got shape " +
                       shape_to_string(x->shape()));
  int64_t k = 0;
  if (const Tensor* kt = ctx.input(1)) {
    ODB_ASSIGN_OR_RETURN(k, scalar_int_of(ctx, *kt, "k"));
  }
  const bool upper = ctx.attr_int("upper", 1) != 0;
  const int64_t rows = x->dim(x->rank() - 2), cols = x->dim(x->rank() - 1);
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x->dtype(), x->shape()));
  for (int64_t i = 0; i < x->numel(); ++i) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    if (keep) copy_element(*x, i, out, i);
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_trilu(KernelRegistry& r) { r.add("Trilu", 14, trilu, HalfMode::kNative); }

}  // namespace onnxdbg::reference
