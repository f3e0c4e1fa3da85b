// Det (ONNX Det-11): determinant of each square matrix in the trailing two dims of a
// [*, M, M] float tensor; output shape [*]. LU decomposition with partial pivoting in double.
#include <cmath>
#include <utility>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

template <class T>
Status det_typed(KernelContext& ctx, const Tensor& x) {
  const int64_t m = x.dim(x.rank() - 1);
  Shape out_shape(x.shape().begin(), x.shape().end() - 2);
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x.dtype(), out_shape));
  std::vector<double> a(static_cast<size_t>(m * m));
  for (int64_t b = 0; b < out.numel(); ++b) {
    const T* src = x.data<T>() + b * m * m;
    for (int64_t i = 0; i < m * m; ++i) a[static_cast<size_t>(i)] = static_cast<double>(src[i]);
    double det = 1;
    for (int64_t c = 0; c < m && det != 0; ++c) {
      int64_t piv = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (std::abs(a[static_cast<size_t>(r * m + c)]) >
            std::abs(a[static_cast<size_t>(piv * m + c)]))
          piv = r;
      if (a[static_cast<size_t>(piv * m + c)] == 0) {
        det = 0;
        break;
      }
      if (piv != c) {
        for (int64_t j = 0; j < m; ++j)
          std::swap(a[static_cast<size_t>(c * m + j)], a[static_cast<size_t>(piv * m + j)]);
        det = -det;
      }
      const double p = a[static_cast<size_t>(c * m + c)];
      det *= p;
      for (int64_t r = c + 1; r < m; ++r) {
        const double f = a[static_cast<size_t>(r * m + c)] / p;
        for (int64_t j = c; j < m; ++j)
          a[static_cast<size_t>(r * m + j)] -= f * a[static_cast<size_t>(c * m + j)];
      }
    }
    out.data<T>()[b] = static_cast<T>(det);
  }
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status det(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->rank() < 2 || x->dim(x->rank() - 1) != x->dim(x->rank() - 2))
    return model_error(ctx.describe() + ": input must be [*, M, M], got shape " +
                       shape_to_string(x->shape()));
  return visit_float(x->dtype(), "Det",
                     [&](auto tag) { return det_typed<decltype(tag)>(ctx, *x); });
}

}  // namespace

void register_det(KernelRegistry& r) { r.add("Det", 11, det).accumulates_in_double().through(22); }

}  // namespace onnxdbg::reference
