// TopK (ONNX TopK-1/10/11): the k largest (or, from opset 11, smallest) elements along `axis` and
// their int64 indices. Equal values keep the lower index first; NaN counts as larger than any
// number. k is an attribute at opset 1 and an input from 10. Output is always sorted.
#include <cmath>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

template <class T>
double key_of(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

Status top_k(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  int64_t k = ctx.attr_int("k", -1);
  if (ctx.opset() >= 10) {
    ODB_ASSIGN_OR_RETURN(const Tensor* kt, ctx.required_input(1));
    ODB_ASSIGN_OR_RETURN(k, scalar_int_of(ctx, *kt, "K"));
  }
  if (x->rank() == 0) return model_error(ctx.describe() + " needs an input of rank >= 1");
  ODB_ASSIGN_OR_RETURN(const int64_t axis,
                       normalize_axis_of(ctx, ctx.attr_int("axis", -1), x->rank()));
  const int64_t dim = x->dim(axis);
  if (k < 0 || k > dim)
    return model_error(ctx.describe() + ": k = " + std::to_string(k) +
                       " is out of range for axis " + std::to_string(axis) + " of size " +
                       std::to_string(dim) + " (input shape " + shape_to_string(x->shape()) + ")");
  const bool largest = ctx.opset() < 11 || ctx.attr_int("largest", 1) != 0;
  Shape out_shape = x->shape();
  out_shape[static_cast<size_t>(axis)] = k;
  ODB_ASSIGN_OR_RETURN(Tensor values, make_output(ctx, x->dtype(), out_shape));
  ODB_ASSIGN_OR_RETURN(Tensor indices, make_output(ctx, DType::kInt64, out_shape));
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = dims_product(x->shape(), 0, a);
  const int64_t inner = dims_product(x->shape(), a + 1, x->shape().size());
  ODB_RETURN_IF_ERROR(visit_all(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>) {
      return unsupported(ctx.describe() + " does not support element type " +
                         std::string(dtype_name(x->dtype())));
    } else {
      const T* px = x->data<T>();
      std::vector<std::pair<double, int64_t>> row(static_cast<size_t>(dim));
      // "a before b": larger (or smaller) first, NaN as the largest, then the lower index.
      auto before = [largest](const std::pair<double, int64_t>& p,
                              const std::pair<double, int64_t>& q) {
        const bool pn = std::isnan(p.first), qn = std::isnan(q.first);
        if (pn || qn) {
          if (pn && qn) return p.second < q.second;
          return largest ? pn : qn;
        }
        if (p.first != q.first) return largest ? p.first > q.first : p.first < q.first;
        return p.second < q.second;
      };
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t in = 0; in < inner; ++in) {
          for (int64_t j = 0; j < dim; ++j)
            row[static_cast<size_t>(j)] = {key_of(px[(o * dim + j) * inner + in]), j};
          std::stable_sort(row.begin(), row.end(), before);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t src = row[static_cast<size_t>(j)].second;
            const int64_t dst = (o * k + j) * inner + in;
            copy_element(*x, (o * dim + src) * inner + in, values, dst);
            indices.data<int64_t>()[dst] = src;
          }
        }
      }
      return Status::ok();
    }
  }));
  ctx.set_output(0, std::move(values));
  ctx.set_output(1, std::move(indices));
  return Status::ok();
}

}  // namespace

void register_top_k(KernelRegistry& r) {
  r.add("TopK", 1, top_k, HalfMode::kNative);               // k attribute
  r.add("TopK", 10, top_k, HalfMode::kNative);              // K input
  r.add("TopK", 11, top_k, HalfMode::kNative).through(24);  // largest, sorted, negative axis
}

}  // namespace onnxdbg::reference
