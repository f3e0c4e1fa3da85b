// AveragePool (ONNX AveragePool-1, -7, -10, -11): N-D average pooling with strides, pads/auto_pad,
// ceil_mode, dilations and count_include_pad (the divisor counts padding inside the padded input,
// never the overhang ceil_mode adds beyond it).
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/pool_common.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status average_pool_typed(KernelContext& ctx, const Tensor& x, const Shape& kernel) {
  ODB_ASSIGN_OR_RETURN(PoolSetup ps, pool_setup(ctx, x, kernel));
  const SpatialGeometry& g = ps.g;
  const Shape& out_shape = ps.out_shape;
  const bool include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), out_shape));
  const int64_t planes = ps.planes, in_size = ps.in_size, out_size = ps.out_size;
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for_each_window_chunk(g, [&](const WindowChunk& wc) {
    for (int64_t pl = 0; pl < planes; ++pl) {
      const T* xp = px + pl * in_size;
      for (int64_t o = wc.begin; o < wc.end; ++o) {
        const auto j = static_cast<size_t>(o - wc.begin);
        const int64_t b = wc.row_ptr[j], e = wc.row_ptr[j + 1];
        T sum = 0;
        for (int64_t q = b; q < e; ++q) sum += xp[wc.offsets[static_cast<size_t>(q)]];
        const int64_t count = include_pad ? wc.padded_count[j] : e - b;
        py[pl * out_size + o] = count > 0 ? sum / static_cast<T>(count) : T(0);
      }
    }
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status average_pool(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(Shape kernel, read_pool_kernel(ctx, *x));
  return visit_float(x->dtype(), "AveragePool", [&](auto tag) {
    return average_pool_typed<decltype(tag)>(ctx, *x, kernel);
  });
}

}  // namespace

void register_average_pool(KernelRegistry& r) {
  for (int v : {1, 7, 10, 11}) r.add("AveragePool", v, average_pool);
}

}  // namespace onnxdbg::reference
