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
  const bool include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), ps.out_shape));
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for_each_pool_window(ps, [&](const PoolWindow& w) {
    const T* xp = px + w.in_base;
    T sum = 0;
    for (int64_t q = 0; q < w.count; ++q) sum += xp[w.offsets[q]];
    const int64_t count = include_pad ? w.padded_count : w.count;
    py[w.out] = count > 0 ? sum / static_cast<T>(count) : T(0);
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status average_pool(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(Shape kernel, read_pool_kernel(ctx, *x));
  return visit_float(x->dtype(), "AveragePool",
                     [&](auto tag) { return average_pool_typed<decltype(tag)>(ctx, *x, kernel); });
}

}  // namespace

void register_average_pool(KernelRegistry& r) {
  for (int v : {1, 7, 10}) r.add("AveragePool", v, average_pool).accumulates_in_double();
  // AveragePool-19 added `dilations`, which pool_common implements for every version; 22 added
  // bfloat16.
  r.add("AveragePool", 11, average_pool).accumulates_in_double().through(22);
}

}  // namespace onnxdbg::reference
