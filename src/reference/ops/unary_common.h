// Shared code for elementwise unary kernels (math functions and activations): apply a function to
// every element of input 0 and write output 0 with the same shape. Follows ONNX's elementwise
// semantics; float16/bfloat16 arrive as float32 (HalfMode::kViaFloat32).
#pragma once

#include <cmath>
#include <type_traits>
#include <utility>

#include "onnxdbg/tensor.h"
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/parallel.h"

namespace onnxdbg::reference {

// The loops of map_elements and map_input_of_same_type, apart so that their pointers are
// __restrict: the chunks reach f through a std::function (parallel_range), and without it the
// compiler must assume that every store may change what f reads by reference (an attribute of
// the kernel), which stops vectorisation (LeakyRelu ran 10x slower). For the same reason they
// take f by value and are not inlined into the std::function's body: f is then their own copy,
// whose captures the compiler keeps in registers.
template <class T, class R, class F>
[[gnu::noinline]] void map_range(const T* __restrict x, R* __restrict y, int64_t n, const F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}
template <class T, class F>
[[gnu::noinline]] void map_range_in_place(T* __restrict p, int64_t n, const F f) {
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(f(p[i]));
}

/// A tensor of x's shape holding f(x[i]); its dtype is that of f's result (e.g. bool for IsNaN).
/// f is called from several threads at once (parallel_range) and must not keep state.
template <class T, class F>
Tensor map_elements(const Tensor& x, F&& f) {
  using R = std::decay_t<decltype(f(std::declval<T>()))>;
  // x's shape is valid, so the allocation checks cannot fail; every element is written below.
  // Named first: `*` on the temporary Expected would copy the whole buffer instead of moving it.
  Expected<Tensor> made = Tensor::make_uninitialized(DTypeOf<R>::value, x.shape());
  Tensor out = std::move(*made);
  const T* px = x.data<T>();
  R* po = out.data<R>();
  parallel_range(x.numel(), kElementwiseGrain,
                 [&](int64_t b, int64_t e) { map_range(px + b, po + b, e - b, f); });
  return out;
}

/// Output 0 = f(x) elementwise in x's type: in x's own buffer when the interpreter offers it
/// (KernelContext::movable_input), saving an allocation and a pass over fresh memory.
template <class T, class F>
void map_input_of_same_type(KernelContext& ctx, const Tensor& x, F&& f) {
  if (Tensor* m = ctx.movable_input(0); m == &x) {
    Tensor y = std::move(*m);
    T* p = y.data<T>();
    parallel_range(y.numel(), kElementwiseGrain,
                   [&](int64_t b, int64_t e) { map_range_in_place(p + b, e - b, f); });
    ctx.set_output(0, std::move(y));
    return;
  }
  ctx.set_output(0, map_elements<T>(x, [&](T v) { return static_cast<T>(f(v)); }));
}

/// Output 0 = f(input 0) for float and double inputs; f is a generic callable returning T or a
/// value convertible to it. Errors: kModelError (missing input), kUnsupported (other dtypes).
template <class F>
Status unary_float_op(KernelContext& ctx, F&& f) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  return visit_float(x->dtype(), ctx, [&](auto tag) -> Status {
    map_input_of_same_type<decltype(tag)>(ctx, *x, f);
    return Status::ok();
  });
}

/// As unary_float_op, also for the signed and unsigned integer types.
template <class F>
Status unary_numeric_op(KernelContext& ctx, F&& f) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  return visit_numeric(x->dtype(), ctx, [&](auto tag) -> Status {
    map_input_of_same_type<decltype(tag)>(ctx, *x, f);
    return Status::ok();
  });
}

/// Output 0 (bool) = pred(input 0) for float and double inputs (IsNaN, IsInf).
template <class F>
Status unary_float_predicate(KernelContext& ctx, F&& pred) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  return visit_float(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    ctx.set_output(0, map_elements<T>(*x, [&](T v) { return static_cast<bool>(pred(v)); }));
    return Status::ok();
  });
}

}  // namespace onnxdbg::reference
