// Shared code for elementwise binary and variadic kernels (arithmetic, comparison, logic,
// Max/Min/Sum/Mean): reading the two inputs, ONNX's two broadcasting regimes, dtype dispatch and
// integer arithmetic that wraps instead of overflowing (signed overflow is undefined in C++).
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "onnxdbg/tensor.h"
#include "reference/kernel.h"
#include "reference/kernel_util.h"

namespace onnxdbg::reference {

/// Which broadcasting rule a kernel version follows.
enum class Broadcast {
  kNumpy,   ///< multidirectional numpy rules (ONNX "Broadcasting", opset 7 on)
  kLegacy,  ///< opset 1-6: B is broadcast onto A only with attribute broadcast=1, aligned at
            ///< attribute `axis` (default: trailing dims), else the shapes must be equal
};

/// Inputs 0 and 1 of a binary node. With Broadcast::kLegacy, `b` may point at `storage`, a
/// reshaped copy of input 1 that numpy broadcasting maps onto A as the old rule would.
/// Errors: kModelError for a missing input, dtypes that differ (unless allow_mixed_types), or
/// shapes the legacy rule refuses.
inline Status binary_inputs(KernelContext& ctx, Broadcast mode, const Tensor*& a, const Tensor*& b,
                            Tensor& storage, bool allow_mixed_types = false) {
  ODB_ASSIGN_OR_RETURN(a, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(b, ctx.required_input(1));
  if (!allow_mixed_types && a->dtype() != b->dtype())
    return model_error(ctx.describe() + " has inputs of different element types: " +
                       std::string(dtype_name(a->dtype())) + " and " +
                       std::string(dtype_name(b->dtype())));
  if (mode == Broadcast::kNumpy || a->shape() == b->shape()) return Status::ok();
  if (ctx.attr_int("broadcast", 0) == 0)
    return model_error(ctx.describe() + " has inputs of shapes " + shape_to_string(a->shape()) +
                       " and " + shape_to_string(b->shape()) +
                       " but attribute broadcast is 0 (before opset 7 shapes must match unless "
                       "broadcast=1)");
  // Legacy rule: B's dims equal a contiguous run of A's dims starting at `axis` (default: the
  // trailing ones). Appending 1s to B turns it into the numpy broadcast of the same meaning.
  const int64_t ra = a->rank(), rb = b->rank();
  int64_t axis = ctx.attr_int("axis", ra - rb);
  if (axis < 0) axis += ra;
  bool ok = rb <= ra && axis >= 0 && axis + rb <= ra;
  for (int64_t i = 0; ok && i < rb; ++i) ok = b->dim(i) == 1 || b->dim(i) == a->dim(axis + i);
  if (!ok)
    return model_error(ctx.describe() + ": shape " + shape_to_string(b->shape()) +
                       " cannot be broadcast onto " + shape_to_string(a->shape()) + " at axis " +
                       std::to_string(axis) + " (legacy broadcasting, opset < 7)");
  Shape s = b->shape();
  s.resize(static_cast<size_t>(ra - axis), 1);
  ODB_ASSIGN_OR_RETURN(storage, b->reshaped(s));
  b = &storage;
  return Status::ok();
}

/// Calls f(T{}) for bool and the numeric types (comparison ops); kUnsupported naming `op`
/// otherwise.
template <class F>
Status visit_numeric_or_bool(DType t, const OpName& op, F&& f) {
  if (t == DType::kBool) return f(bool{});
  return visit_numeric(t, op, std::forward<F>(f));
}

/// Unsigned type wide enough that arithmetic on it neither promotes to int nor overflows
/// undefinedly: for T narrower than unsigned int, unsigned int; else T's unsigned twin.
template <class T>
using WrapType =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

/// a + b, a - b, a * b with two's-complement wrap-around for integers; plain for floats.
template <class T>
T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  } else {
    return a + b;
  }
}
template <class T>
T wrapping_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  } else {
    return a - b;
  }
}
template <class T>
T wrapping_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  } else {
    return a * b;
  }
}

// y[j] = f(y[j], o[j * so]) (or f(o[j * so], y[j]) when !y_first) for j in [0, n), its pointers
// __restrict and f its own copy for vectorisation, as in binary_run.
template <class T, class F>
[[gnu::noinline]] void in_place_run(T* __restrict y, const T* __restrict o, int64_t so, int64_t n,
                                    bool y_first, const F f) {
  if (so == 0) {
    const T v = *o;
    if (y_first)
      for (int64_t j = 0; j < n; ++j) y[j] = f(y[j], v);
    else
      for (int64_t j = 0; j < n; ++j) y[j] = f(v, y[j]);
  } else if (so == 1) {
    if (y_first)
      for (int64_t j = 0; j < n; ++j) y[j] = f(y[j], o[j]);
    else
      for (int64_t j = 0; j < n; ++j) y[j] = f(o[j], y[j]);
  } else if (y_first) {
    for (int64_t j = 0; j < n; ++j) y[j] = f(y[j], o[j * so]);
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = f(o[j * so], y[j]);
  }
}

/// Sets output 0 = f(A, B) in the buffer of operand k (0: A, 1: B) and returns true when the
/// interpreter offers that operand (KernelContext::movable_input) and it has the output's shape;
/// each output element reads only the same element of it, before writing it. Else false.
template <class T, class F>
bool binary_in_place(KernelContext& ctx, const Tensor& a, const Tensor& b, size_t k, F& f) {
  Tensor* m = ctx.movable_input(k);
  const Tensor& same = k == 0 ? a : b;
  const Tensor& other = k == 0 ? b : a;
  if (!m || m != &same || other.dtype() != same.dtype() || other.numel() > same.numel())
    return false;
  // Broadcasting `other` against `same` must give same's shape: other's dims, aligned to the
  // right, are each 1 or same's (checked without building the broadcast shape).
  const Shape& to = same.shape();
  const Shape& from = other.shape();
  if (from.size() > to.size()) return false;
  for (size_t i = 0, off = to.size() - from.size(); i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[off + i]) return false;
  Tensor y = std::move(*m);
  T* py = y.data<T>();
  const T* po = other.data<T>();
  const int64_t n = y.numel();
  if (other.numel() == n) {  // equal counts under broadcasting: the same element order
    parallel_range(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      in_place_run<T>(py + lo, po + lo, 1, hi - lo, k == 0, f);
    });
  } else {
    parallel_for_each_broadcast_run(
        y.shape(), {broadcast_strides(other.shape(), y.shape())},
        [&](int64_t i, const int64_t* o, int64_t len, const int64_t* st) {
          in_place_run<T>(py + i, po + o[0], st[0], len, k == 0, f);
        });
  }
  ctx.set_output(0, std::move(y));
  return true;
}

/// Output 0 = f(A, B) elementwise with broadcasting, for inputs of one dtype visited by `visit`
/// (a visit_* function object). The output dtype is that of f's result for the input type.
template <class Visit, class F>
Status binary_elementwise(KernelContext& ctx, Broadcast mode, Visit&& visit, F&& f) {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  Tensor storage;
  ODB_RETURN_IF_ERROR(binary_inputs(ctx, mode, a, b, storage));
  return visit(a->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    using R = std::decay_t<decltype(f(T{}, T{}))>;
    if constexpr (std::is_same_v<R, T>) {
      if (binary_in_place<T>(ctx, *a, *b, 0, f) || binary_in_place<T>(ctx, *a, *b, 1, f))
        return Status::ok();
    }
    ODB_ASSIGN_OR_RETURN(Tensor out, (broadcast_binary<T, T, R>(*a, *b, f)));
    ctx.set_output(0, std::move(out));
    return Status::ok();
  });
}

/// Visitor objects for binary_elementwise.
struct VisitFloat {
  template <class F>
  Status operator()(DType t, const OpName& op, F&& f) const {
    return visit_float(t, op, std::forward<F>(f));
  }
};
struct VisitNumeric {
  template <class F>
  Status operator()(DType t, const OpName& op, F&& f) const {
    return visit_numeric(t, op, std::forward<F>(f));
  }
};
struct VisitNumericOrBool {
  template <class F>
  Status operator()(DType t, const OpName& op, F&& f) const {
    return visit_numeric_or_bool(t, op, std::forward<F>(f));
  }
};
/// The signed and unsigned integer types (bitwise ops); kModelError naming `op` otherwise.
struct VisitInteger {
  template <class F>
  Status operator()(DType t, const OpName& op, F&& f) const {
    if (!is_integer(t))
      return model_error(op.str() + " takes integer inputs, not " + std::string(dtype_name(t)));
    return visit_numeric(t, op, [&](auto tag) -> Status {
      if constexpr (std::is_integral_v<decltype(tag)>) {
        return f(tag);
      } else {
        return Status::ok();  // unreachable: is_integer excludes the float types
      }
    });
  }
};
struct VisitBool {
  template <class F>
  Status operator()(DType t, const OpName& op, F&& f) const {
    if (t != DType::kBool)
      return model_error(op.str() + " takes bool inputs, not " + std::string(dtype_name(t)));
    return f(bool{});
  }
};

/// The present inputs of a variadic node (Max, Min, Sum, Mean), all of one dtype.
/// Errors: kModelError when there are none or their dtypes differ.
inline Expected<std::vector<const Tensor*>> variadic_inputs(const KernelContext& ctx) {
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (const Tensor* t = ctx.input(i)) ins.push_back(t);
  if (ins.empty()) return model_error(ctx.describe() + " needs at least one input");
  for (const Tensor* t : ins)
    if (t->dtype() != ins[0]->dtype())
      return model_error(ctx.describe() + " has inputs of different element types: " +
                         std::string(dtype_name(ins[0]->dtype())) + " and " +
                         std::string(dtype_name(t->dtype())));
  return ins;
}

/// Output 0 of a variadic node: the inputs broadcast together (numpy rules) and folded left to
/// right with `combine(acc, x)` in type T, then `finish(acc, count)` applied.
template <class T, class Combine, class Finish>
Status variadic_fold(KernelContext& ctx, const std::vector<const Tensor*>& ins, Combine&& combine,
                     Finish&& finish) {
  if (ins.size() == 2) {  // the common case, with broadcast_binary's flat loops
    ODB_ASSIGN_OR_RETURN(Tensor out, (broadcast_binary<T, T, T>(*ins[0], *ins[1], [&](T a, T b) {
                           return finish(combine(a, b), size_t{2});
                         })));
    ctx.set_output(0, std::move(out));
    return Status::ok();
  }
  std::vector<Shape> shapes;
  shapes.reserve(ins.size());
  for (const Tensor* t : ins) shapes.push_back(t->shape());
  ODB_ASSIGN_OR_RETURN(Shape out_shape, broadcast_shapes(shapes));
  ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make_uninitialized(DTypeOf<T>::value, out_shape));
  std::vector<std::vector<int64_t>> strides;
  strides.reserve(ins.size());
  for (const Tensor* t : ins) strides.push_back(broadcast_strides(t->shape(), out_shape));
  T* po = out.data<T>();
  const size_t n = ins.size();
  for_each_broadcast_run(out_shape, strides,
                         [&](int64_t i, const int64_t* offs, int64_t len, const int64_t* steps) {
                           for (int64_t j = 0; j < len; ++j) {
                             T acc = ins[0]->data<T>()[offs[0] + j * steps[0]];
                             for (size_t k = 1; k < n; ++k)
                               acc = combine(acc, ins[k]->data<T>()[offs[k] + j * steps[k]]);
                             po[i + j] = finish(acc, n);
                           }
                         });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace onnxdbg::reference
