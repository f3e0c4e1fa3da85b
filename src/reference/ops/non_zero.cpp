// NonZero (ONNX NonZero-9/13): the indices of the non-zero elements as an int64 tensor of shape
// [rank, count], in row-major order (numpy.nonzero). A scalar is treated as a 1-element vector.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status non_zero(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->dtype() == DType::kString || x->dtype() == DType::kComplex64 ||
      x->dtype() == DType::kComplex128)
    return unsupported(ctx.describe() + " does not support element type " +
                       std::string(dtype_name(x->dtype())));
  const Shape shape = x->rank() == 0 ? Shape{1} : x->shape();
  std::vector<std::vector<int64_t>> hits;
  int64_t i = 0;
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    if (x->get_as_double(i++) != 0.0) hits.push_back(idx);
  });
  const auto rank = static_cast<int64_t>(shape.size()), n = static_cast<int64_t>(hits.size());
  Tensor out(DType::kInt64, {rank, n});
  for (int64_t k = 0; k < n; ++k)
    for (int64_t d = 0; d < rank; ++d)
      out.data<int64_t>()[d * n + k] = hits[static_cast<size_t>(k)][static_cast<size_t>(d)];
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_non_zero(KernelRegistry& r) { r.add("NonZero", 9, non_zero, HalfMode::kNative); }

}  // namespace onnxdbg::reference
