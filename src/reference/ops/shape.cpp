// Shape (ONNX Shape-1/13/15): the input's dimensions as a 1-D int64 tensor; from opset 15 the
// optional `start`/`end` attributes select a slice of them (negative values count from the end,
// out-of-range values are clamped).
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status shape(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t rank = x->rank();
  int64_t start = 0, end = rank;
  if (ctx.opset() >= 15) {
    start = ctx.attr_int("start", 0);
    end = ctx.attr_int("end", rank);
  }
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  start = clamp(start);
  end = clamp(end);
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(x->dim(i));
  ctx.set_output(0, Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims));
  return Status::ok();
}

}  // namespace

void register_shape(KernelRegistry& r) {
  r.add("Shape", 1, shape, HalfMode::kNative);
  r.add("Shape", 15, shape, HalfMode::kNative).through(25);  // start/end attributes
}

}  // namespace onnxdbg::reference
