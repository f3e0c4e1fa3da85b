// Unique (ONNX Unique-11): the distinct elements (or, with `axis`, distinct slices along it),
// sorted ascending (default) or in order of first occurrence, with the first-occurrence indices,
// the inverse indices and the counts (int64).
#include <map>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status unique(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const bool sorted = ctx.attr_int("sorted", 1) != 0;
  Shape shape = {x->numel()};
  int64_t axis = 0;
  if (ctx.has_attr("axis")) {
    shape = x->shape();
    ODB_ASSIGN_OR_RETURN(axis, normalize_axis_of(ctx, ctx.attr_int("axis", 0), x->rank()));
  }
  const auto a = static_cast<size_t>(axis);
  const int64_t dim = shape[a];
  const int64_t outer = dims_product(shape, 0, a), inner = dims_product(shape, a + 1, shape.size());
  // Slices are numbered in order of first occurrence.
  std::vector<int64_t> first, counts, inverse(static_cast<size_t>(dim));
  std::vector<size_t> order;  // slice ids in output order
  ODB_RETURN_IF_ERROR(visit_all(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    using K =
        std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>, float, T>;
    std::map<std::vector<K>, size_t> ids;
    for (int64_t t = 0; t < dim; ++t) {
      std::vector<K> key;
      key.reserve(static_cast<size_t>(outer * inner));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t flat = (o * dim + t) * inner + i;
          if constexpr (std::is_same_v<T, std::string>)
            key.push_back(x->strings()[static_cast<size_t>(flat)]);
          else
            key.push_back(static_cast<K>(x->data<T>()[flat]));
        }
      auto [it, inserted] = ids.emplace(std::move(key), first.size());
      if (inserted) {
        first.push_back(t);
        counts.push_back(0);
      }
      ++counts[it->second];
      inverse[static_cast<size_t>(t)] = static_cast<int64_t>(it->second);
    }
    if (sorted)
      for (const auto& [key, id] : ids) order.push_back(id);
    else
      for (size_t id = 0; id < first.size(); ++id) order.push_back(id);
    return Status::ok();
  }));
  const auto u = static_cast<int64_t>(order.size());
  std::vector<int64_t> rank_of(order.size());
  for (size_t r = 0; r < order.size(); ++r) rank_of[order[r]] = static_cast<int64_t>(r);
  Shape y_shape = shape;
  y_shape[a] = u;
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, x->dtype(), y_shape));
  std::vector<int64_t> idx_out, cnt_out;
  for (int64_t r = 0; r < u; ++r) {
    const size_t id = order[static_cast<size_t>(r)];
    for (int64_t o = 0; o < outer; ++o)
      copy_elements(*x, (o * dim + first[id]) * inner, y, (o * u + r) * inner, inner);
    idx_out.push_back(first[id]);
    cnt_out.push_back(counts[id]);
  }
  for (auto& v : inverse) v = rank_of[static_cast<size_t>(v)];
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, Tensor::from_vector<int64_t>({u}, idx_out));
  ctx.set_output(2, Tensor::from_vector<int64_t>({dim}, inverse));
  ctx.set_output(3, Tensor::from_vector<int64_t>({u}, cnt_out));
  return Status::ok();
}

}  // namespace

void register_unique(KernelRegistry& r) {
  r.add("Unique", 11, unique, HalfMode::kNative).through(28);
}

}  // namespace onnxdbg::reference
