// Multinomial (ONNX Multinomial-7): for each row of input [batch, class] (unnormalised log
// probabilities) draws sample_size class indices (int32 by default, or int64 by `dtype`). Each
// draw takes one numpy-style uniform U and returns the first class whose cumulative softmax
// probability exceeds U (random_common.h for seeding). No ONNX test data checks the values.
#include <algorithm>
#include <limits>

#include "reference/ops/random_common.h"

namespace onnxdbg::reference {
namespace {

Status multinomial(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->rank() != 2 || !is_floating(x->dtype()))
    return model_error(ctx.describe() + ": input must be a float [batch, class] tensor, got " +
                       std::string(dtype_name(x->dtype())) + " " + shape_to_string(x->shape()));
  const int64_t samples = ctx.attr_int("sample_size", 1);
  if (samples < 0) return model_error(ctx.describe() + ": sample_size must be non-negative");
  auto t = dtype_from_onnx(static_cast<int32_t>(ctx.attr_int("dtype", 6)));
  if (!t || (*t != DType::kInt32 && *t != DType::kInt64))
    return model_error(ctx.describe() + ": dtype must be int32 or int64");
  const int64_t batch = x->dim(0), classes = x->dim(1);
  if (classes == 0 && samples > 0)
    return model_error(ctx.describe() + ": cannot sample from zero classes");
  ODB_ASSIGN_OR_RETURN(Tensor y, make_output(ctx, *t, {batch, samples}));
  auto rs = NumpyRandomState::for_node(ctx);
  std::vector<double> cdf(static_cast<size_t>(classes));
  for (int64_t b = 0; b < batch; ++b) {
    double m = -std::numeric_limits<double>::infinity(), s = 0;
    for (int64_t k = 0; k < classes; ++k) m = std::max(m, x->get_as_double(b * classes + k));
    for (int64_t k = 0; k < classes; ++k) {
      s += std::exp(x->get_as_double(b * classes + k) - m);
      cdf[static_cast<size_t>(k)] = s;
    }
    for (int64_t j = 0; j < samples; ++j) {
      const double u = rs.uniform() * s;
      const auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
      y.set_from_double(b * samples + j,
                        static_cast<double>(std::min<int64_t>(it - cdf.begin(), classes - 1)));
    }
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_multinomial(KernelRegistry& r) {
  r.add("Multinomial", 7, multinomial, HalfMode::kNative).through(22);
}

}  // namespace onnxdbg::reference
