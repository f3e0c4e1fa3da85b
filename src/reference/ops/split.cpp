// Split (ONNX Split-1/2/11/13/18): cuts the input along `axis` into the given part sizes (`split`
// attribute before opset 13, input from 13) or into equal parts, one per output; from opset 18
// `num_outputs` may leave a smaller last part.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status split(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->rank() == 0) return model_error(ctx.describe() + " cannot split a scalar");
  ODB_ASSIGN_OR_RETURN(const int64_t axis,
                       normalize_axis_of(ctx, ctx.attr_int("axis", 0), x->rank()));
  const int64_t dim = x->dim(axis);
  const int64_t n_out = static_cast<int64_t>(ctx.num_outputs());
  std::optional<std::vector<int64_t>> parts;
  if (ctx.opset() >= 13 || (ctx.opset() == 1 && ctx.input(1))) {
    ODB_ASSIGN_OR_RETURN(parts, optional_ints_input(ctx, 1, "split"));
  } else if (ctx.has_attr("split")) {
    parts = ctx.attr_ints("split");
  }
  if (!parts) {
    const int64_t n = ctx.opset() >= 18 ? ctx.attr_int("num_outputs", n_out) : n_out;
    if (n <= 0) return model_error(ctx.describe() + " has no outputs");
    if (dim % n != 0 && ctx.opset() < 18)
      return model_error(ctx.describe() + ": axis " + std::to_string(axis) + " of shape " +
                         shape_to_string(x->shape()) + " cannot be split into " +
                         std::to_string(n) + " equal parts");
    const int64_t chunk = (dim + n - 1) / n;
    parts.emplace();
    for (int64_t i = 0, left = dim; i < n; ++i, left -= chunk)
      parts->push_back(std::clamp<int64_t>(left, 0, chunk));
  }
  int64_t total = 0;
  for (int64_t p : *parts) {
    if (p < 0)
      return model_error(ctx.describe() + ": split " + list_to_string(*parts) +
                         " has a negative part");
    total += p;
  }
  if (total != dim || static_cast<int64_t>(parts->size()) != n_out)
    return model_error(ctx.describe() + ": split " + list_to_string(*parts) +
                       " does not cut axis " + std::to_string(axis) + " of shape " +
                       shape_to_string(x->shape()) + " into " + std::to_string(n_out) + " outputs");
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = dims_product(x->shape(), 0, a);
  const int64_t inner = dims_product(x->shape(), a + 1, x->shape().size());
  int64_t start = 0;
  for (size_t k = 0; k < parts->size(); ++k) {
    Shape s = x->shape();
    s[a] = (*parts)[k];
    ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x->dtype(), s));
    const int64_t block = s[a] * inner;
    for (int64_t o = 0; o < outer; ++o)
      copy_elements(*x, (o * dim + start) * inner, out, o * block, block);
    start += s[a];
    ctx.set_output(k, std::move(out));
  }
  return Status::ok();
}

}  // namespace

void register_split(KernelRegistry& r) {
  r.add("Split", 1, split, HalfMode::kNative);
  r.add("Split", 2, split, HalfMode::kNative);   // split attribute only
  r.add("Split", 13, split, HalfMode::kNative);  // split as an input
  r.add("Split", 18, split, HalfMode::kNative);  // num_outputs
}

}  // namespace onnxdbg::reference
