// MaxPool (ONNX MaxPool-1, -8, -10, -11, -12): N-D max pooling with strides, pads/auto_pad,
// dilations and ceil_mode, and the optional Indices output (flat input indices, row- or
// column-major within a plane as storage_order says).
#include <cmath>

#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/pool_common.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status max_pool_typed(KernelContext& ctx, const Tensor& x, const Shape& kernel) {
  ODB_ASSIGN_OR_RETURN(PoolSetup ps, pool_setup(ctx, x, kernel));
  const bool column_major = ctx.attr_int("storage_order", 0) != 0;
  const bool want_indices = ctx.output_requested(1);
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), ps.out_shape));
  Tensor indices;
  if (want_indices) {
    ODB_ASSIGN_OR_RETURN(indices, Tensor::make(DType::kInt64, ps.out_shape));
  }
  const T* px = x.data<T>();
  T* py = y.data<T>();
  int64_t* pi = want_indices ? indices.data<int64_t>() : nullptr;
  // Column-major offset of a row-major spatial offset (storage_order = 1).
  const Shape& in_spatial = ps.in_spatial;
  auto to_column_major = [&](int64_t off) {
    int64_t result = 0, scale = 1;
    for (size_t d = 0; d < in_spatial.size(); ++d) {
      int64_t stride = 1;
      for (size_t e = d + 1; e < in_spatial.size(); ++e) stride *= in_spatial[e];
      const int64_t coord = (off / stride) % in_spatial[d];
      result += coord * scale;
      scale *= in_spatial[d];
    }
    return result;
  };
  for_each_pool_window(ps, [&](const PoolWindow& w) {
    const T* xp = px + w.in_base;
    T best = T(0);
    int64_t arg = -1;
    for (int64_t q = 0; q < w.count; ++q) {
      const int64_t off = w.offsets[q];
      const T v = xp[off];
      bool better = arg < 0 || v > best;
      if constexpr (std::is_floating_point_v<T>)
        better = better || (std::isnan(v) && !std::isnan(best));
      if (better) {
        best = v;
        arg = off;
      }
    }
    py[w.out] = best;
    if (pi) pi[w.out] = arg < 0 ? -1 : w.in_base + (column_major ? to_column_major(arg) : arg);
  });
  ctx.set_output(0, std::move(y));
  if (want_indices) ctx.set_output(1, std::move(indices));
  return Status::ok();
}

Status max_pool(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(Shape kernel, read_pool_kernel(ctx, *x));
  return visit_numeric(x->dtype(), "MaxPool", [&](auto tag) {
    return max_pool_typed<decltype(tag)>(ctx, *x, kernel);
  });
}

}  // namespace

void register_max_pool(KernelRegistry& r) {
  for (int v : {1, 8, 10, 11, 12}) r.add("MaxPool", v, max_pool);
}

}  // namespace onnxdbg::reference
