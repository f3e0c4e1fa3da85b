// ZipMap (ai.onnx.ml ZipMap-1): each row of the float tensor X ([N, C] or [C]) becomes one map
// from the C class labels (classlabels_int64s or classlabels_strings) to the row's values, in
// label order; the output is the sequence of those N maps (seq(map(int64|string, float))).
#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status zip_map(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(ClassLabels labels,
                       class_labels_of(ctx, "classlabels_int64s", "classlabels_strings"));
  if (x->dtype() != DType::kFloat)
    return model_error(ctx.describe() + " takes a float input, got " +
                       std::string(dtype_name(x->dtype())));
  if (x->rank() != 1 && x->rank() != 2)
    return model_error(ctx.describe() + " takes an input of shape [C] or [N, C], got [" +
                       shape_to_string(x->shape()) + "]");
  const int64_t n = x->rank() == 1 ? 1 : x->dim(0), c = x->dim(x->rank() - 1);
  if (c != labels.size())
    return model_error(ctx.describe() + " has " + std::to_string(labels.size()) +
                       " class labels for an input of " + std::to_string(c) + " columns");
  std::vector<int64_t> all(static_cast<size_t>(c));
  for (int64_t k = 0; k < c; ++k) all[static_cast<size_t>(k)] = k;
  const Tensor keys = labels.gather(all);
  Sequence seq;
  seq.elem_type = DType::kFloat;
  seq.map_key_type = keys.dtype();
  for (int64_t i = 0; i < n; ++i) {
    Map m;
    m.keys = keys;
    m.values = Tensor(DType::kFloat, {c});
    copy_elements(*x, i * c, m.values, 0, c);
    seq.maps.push_back(std::move(m));
  }
  ctx.set_output_value(0, Value(std::move(seq)));
  return Status::ok();
}

}  // namespace

void register_zip_map(KernelRegistry& r) {
  r.add("ZipMap", 1, zip_map, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
