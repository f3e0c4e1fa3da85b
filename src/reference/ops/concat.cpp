// Concat (ONNX Concat-1/4/11/13): joins the inputs along `axis` (default 1 at opset 1, required
// from 4, negative from 11); all other dimensions must match.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status concat(KernelContext& ctx) {
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.input(i)) ins.push_back(ctx.input(i));
  if (ins.empty()) return model_error(ctx.describe() + " has no inputs");
  if (ctx.opset() >= 4 && !ctx.has_attr("axis"))
    return model_error(ctx.describe() + " has no 'axis' attribute");
  const Tensor& first = *ins[0];
  if (first.rank() == 0) return model_error(ctx.describe() + " cannot concatenate scalars");
  ODB_ASSIGN_OR_RETURN(const int64_t axis,
                       normalize_axis_of(ctx, ctx.attr_int("axis", 1), first.rank()));
  Shape out_shape = first.shape();
  out_shape[static_cast<size_t>(axis)] = 0;
  for (size_t k = 0; k < ins.size(); ++k) {
    const Tensor& t = *ins[k];
    bool ok = t.rank() == first.rank();
    for (int64_t d = 0; ok && d < t.rank(); ++d) ok = d == axis || t.dim(d) == first.dim(d);
    if (!ok || t.dtype() != first.dtype())
      return model_error(ctx.describe() + ": input " + std::to_string(k) + " (" +
                         std::string(dtype_name(t.dtype())) + ", shape " +
                         shape_to_string(t.shape()) + ") does not match input 0 (" +
                         std::string(dtype_name(first.dtype())) + ", shape " +
                         shape_to_string(first.shape()) + ") outside axis " + std::to_string(axis));
    out_shape[static_cast<size_t>(axis)] += t.dim(axis);
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, first.dtype(), out_shape));
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = dims_product(out_shape, 0, a),
                inner = dims_product(out_shape, a + 1, out_shape.size());
  int64_t pos = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* t : ins) {
      const int64_t block = t->dim(axis) * inner;
      copy_elements(*t, o * block, out, pos, block);
      pos += block;
    }
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_concat(KernelRegistry& r) {
  r.add("Concat", 1, concat, HalfMode::kNative);
  r.add("Concat", 4, concat, HalfMode::kNative);   // axis required
  r.add("Concat", 11, concat, HalfMode::kNative);  // negative axis
}

}  // namespace onnxdbg::reference
