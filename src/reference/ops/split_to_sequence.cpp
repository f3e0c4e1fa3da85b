// SplitToSequence (ONNX SplitToSequence-11): cuts the input along `axis` into a sequence. `split`
// a scalar: parts of that size (the last may be smaller); a 1-D tensor: those part sizes;
// omitted: parts of size 1, with the axis removed when keepdims is 0.
#include "reference/ops/sequence_common.h"

namespace onnxdbg::reference {
namespace {

Status split_to_sequence(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->rank() == 0) return model_error(ctx.describe() + " cannot split a scalar");
  ODB_ASSIGN_OR_RETURN(const int64_t axis,
                       normalize_axis_of(ctx, ctx.attr_int("axis", 0), x->rank()));
  const int64_t dim = x->dim(axis);
  std::vector<int64_t> parts;
  bool squeeze = false;
  if (const Value* sv = ctx.input_value(1)) {
    if (!sv->is_tensor()) return wrong_kind(ctx, 1, "a tensor", *sv);
    ODB_ASSIGN_OR_RETURN(parts, ints_of_input(ctx, 1, "split"));
    if (sv->tensor().rank() == 0) {
      const int64_t chunk = parts[0];
      if (chunk <= 0)
        return model_error(ctx.describe() + ": split " + std::to_string(chunk) +
                           " must be positive");
      parts.clear();
      for (int64_t left = dim; left > 0; left -= chunk) parts.push_back(std::min(left, chunk));
    }
  } else {
    parts.assign(static_cast<size_t>(dim), 1);
    squeeze = ctx.attr_int("keepdims", 1) == 0;
  }
  int64_t total = 0;
  for (int64_t p : parts) {
    if (p < 0)
      return model_error(ctx.describe() + ": split " + list_to_string(parts) +
                         " has a negative part");
    total += p;
  }
  if (total != dim)
    return model_error(ctx.describe() + ": split " + list_to_string(parts) + " sums to " +
                       std::to_string(total) + " but axis " + std::to_string(axis) + " of shape " +
                       shape_to_string(x->shape()) + " has " + std::to_string(dim));
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = dims_product(x->shape(), 0, a);
  const int64_t inner = dims_product(x->shape(), a + 1, x->shape().size());
  Sequence out;
  out.elem_type = x->dtype();
  int64_t start = 0;
  for (int64_t p : parts) {
    Shape s = x->shape();
    s[a] = p;
    ODB_ASSIGN_OR_RETURN(Tensor t, make_output(ctx, x->dtype(), s));
    const int64_t block = p * inner;
    for (int64_t o = 0; o < outer; ++o)
      copy_elements(*x, (o * dim + start) * inner, t, o * block, block);
    start += p;
    if (squeeze) {
      s.erase(s.begin() + axis);
      ODB_ASSIGN_OR_RETURN(t, t.reshaped(s));
    }
    out.tensors.push_back(std::move(t));
  }
  ctx.set_output_value(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_split_to_sequence(KernelRegistry& r) {
  r.add("SplitToSequence", 11, split_to_sequence, HalfMode::kNative).through(24);
}

}  // namespace onnxdbg::reference
