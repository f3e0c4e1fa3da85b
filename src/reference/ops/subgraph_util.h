// Shared by the control-flow kernels (If, Loop, Scan): checking a subgraph's results, slicing a
// tensor along an axis and stacking per-iteration values into scan outputs.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {

/// The graph attribute `name`, or kModelError naming the node.
inline Expected<const onnx::GraphProto*> graph_attr(const KernelContext& ctx,
                                                    const std::string& name) {
  const onnx::GraphProto* g = ctx.attr_graph(name);
  if (!g) return model_error(ctx.describe() + " has no graph attribute '" + name + "'");
  return g;
}

/// A boolean condition held in a one-element tensor (bool, or a number read as "!= 0").
inline Expected<bool> condition_value(const KernelContext& ctx, const Tensor& t,
                                      const std::string& what) {
  if (t.numel() != 1 || t.dtype() == DType::kString)
    return model_error(ctx.describe() + ": " + what + " must be a single bool, got " +
                       std::string(dtype_name(t.dtype())) + " of shape " +
                       shape_to_string(t.shape()));
  return t.get_as_double(0) != 0.0;
}

/// x[..., index, ...] along `axis` (that axis removed).
inline Tensor take_along(const Tensor& x, int64_t axis, int64_t index) {
  const auto a = static_cast<size_t>(axis);
  Shape s = x.shape();
  const int64_t dim = s[a];
  s.erase(s.begin() + axis);
  Tensor out(x.dtype(), s);
  const int64_t outer = dims_product(x.shape(), 0, a),
                inner = dims_product(x.shape(), a + 1, x.shape().size());
  for (int64_t o = 0; o < outer; ++o)
    copy_elements(x, (o * dim + index) * inner, out, o * inner, inner);
  return out;
}

/// Stacks `parts` (equal dtype and shape) along a new axis `axis` of the result. When `parts` is
/// empty the result has a 0-size axis and the dtype/dims declared by `decl` (unknown dims: 0).
inline Expected<Tensor> stack_along(const KernelContext& ctx, const std::vector<Tensor>& parts,
                                    int64_t axis, const onnx::ValueInfoProto& decl) {
  if (parts.empty()) {
    const ValueSignature sig = value_signature(decl);
    if (sig.dtype == DType::kUndefined)
      return model_error(ctx.describe() + ": no iterations ran and the element type of '" +
                         decl.name() + "' is not declared");
    Shape s;
    for (int64_t d : sig.shape) s.push_back(d < 0 ? 0 : d);
    s.insert(s.begin() + std::clamp<int64_t>(axis, 0, static_cast<int64_t>(s.size())), 0);
    return make_output(ctx, sig.dtype, s);
  }
  const Tensor& first = parts[0];
  for (size_t i = 1; i < parts.size(); ++i)
    if (parts[i].shape() != first.shape() || parts[i].dtype() != first.dtype())
      return model_error(ctx.describe() + ": scan output '" + decl.name() + "' has shape " +
                         shape_to_string(first.shape()) + " in iteration 0 but " +
                         shape_to_string(parts[i].shape()) + " in iteration " + std::to_string(i));
  const int64_t rank = first.rank() + 1;
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return model_error(ctx.describe() + ": scan output axis " + std::to_string(axis) +
                       " is out of range for rank " + std::to_string(rank));
  Shape s = first.shape();
  const auto n = static_cast<int64_t>(parts.size());
  s.insert(s.begin() + a, n);
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, first.dtype(), s));
  const int64_t outer = dims_product(first.shape(), 0, static_cast<size_t>(a));
  const int64_t inner = dims_product(first.shape(), static_cast<size_t>(a), first.shape().size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t t = 0; t < n; ++t)
      copy_elements(parts[static_cast<size_t>(t)], o * inner, out, (o * n + t) * inner, inner);
  return out;
}

}  // namespace onnxdbg::reference
