// Shared code for Softmax, LogSoftmax and Hardmax. Before opset 13 the input is seen as a 2-D
// matrix [prod(dims before axis), prod(dims from axis)] and each row is normalised (default axis
// 1); from opset 13 the op normalises along the single dimension `axis` (default -1).
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "onnxdbg/tensor.h"
#include "reference/kernel.h"
#include "reference/kernel_util.h"

namespace onnxdbg::reference {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

/// Output 0 = the op of kind `kKind` over input 0 (float or double; halves via float32), with the
/// pre-13 "coerce to 2-D" semantics when kLegacy. Sums are taken in double after subtracting the
/// row maximum, so large inputs do not overflow. Hardmax marks the first maximum of each row.
/// Errors: kModelError for an axis out of range, kUnsupported for non-float inputs.
template <SoftmaxKind kKind, bool kLegacy>
Status softmax_family(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t rank = x->rank();
  const int64_t axis_attr = ctx.attr_int("axis", kLegacy ? 1 : -1);
  int64_t outer = 1, len = 1, inner = 1;
  if constexpr (kLegacy) {
    const int64_t a = axis_attr < 0 ? axis_attr + rank : axis_attr;
    if (a < 0 || a > rank)
      return model_error(ctx.describe() + ": axis " + std::to_string(axis_attr) +
                         " is out of range for rank " + std::to_string(rank));
    for (int64_t d = 0; d < rank; ++d) (d < a ? outer : len) *= x->dim(d);
  } else {
    ODB_ASSIGN_OR_RETURN(const int64_t a, normalize_axis(axis_attr, rank));
    for (int64_t d = 0; d < rank; ++d) {
      if (d < a)
        outer *= x->dim(d);
      else if (d == a)
        len = x->dim(d);
      else
        inner *= x->dim(d);
    }
  }
  return visit_float(x->dtype(), ctx, [&](auto tag) -> Status {
    using T = decltype(tag);
    Tensor out(x->dtype(), x->shape());
    const T* px = x->data<T>();
    T* po = out.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < inner; ++in) {
        const int64_t base = o * len * inner + in;
        auto at = [&](int64_t k) { return base + k * inner; };
        int64_t arg = 0;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < len; ++k) {
          if (static_cast<double>(px[at(k)]) > mx) {
            mx = px[at(k)];
            arg = k;
          }
        }
        if constexpr (kKind == SoftmaxKind::kHardmax) {
          for (int64_t k = 0; k < len; ++k) po[at(k)] = k == arg ? T{1} : T{0};
        } else {
          double sum = 0;
          for (int64_t k = 0; k < len; ++k) sum += std::exp(static_cast<double>(px[at(k)]) - mx);
          for (int64_t k = 0; k < len; ++k) {
            const double v = static_cast<double>(px[at(k)]) - mx;
            if constexpr (kKind == SoftmaxKind::kSoftmax)
              po[at(k)] = static_cast<T>(std::exp(v) / sum);
            else
              po[at(k)] = static_cast<T>(v - std::log(sum));
          }
        }
      }
    }
    ctx.set_output(0, std::move(out));
    return Status::ok();
  });
}

}  // namespace onnxdbg::reference
