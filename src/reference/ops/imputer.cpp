// Imputer (ai.onnx.ml Imputer-1): elements equal to the replaced value (replaced_value_float for
// float/double input, NaN matching NaN; replaced_value_int64 for int32/int64) become the imputed
// value of their feature (imputed_value_floats or _int64s: one per feature along the last axis,
// or one for all). Output: X's dtype and shape.
#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status imputer(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const DType t = x->dtype();
  const bool floating = t == DType::kFloat || t == DType::kDouble;
  if (!floating && t != DType::kInt32 && t != DType::kInt64)
    return model_error(ctx.describe() + " takes int32, int64, float or double input, got " +
                       std::string(dtype_name(t)));
  std::vector<double> imputed;
  for (float f : ctx.attr_floats("imputed_value_floats")) imputed.push_back(f);
  for (int64_t v : ctx.attr_ints("imputed_value_int64s")) imputed.push_back(static_cast<double>(v));
  const std::string which = floating ? "imputed_value_floats" : "imputed_value_int64s";
  if (!ctx.has_attr(which) ||
      imputed.size() != (floating ? ctx.attr_floats(which).size() : ctx.attr_ints(which).size()))
    return model_error(ctx.describe() + " has a " + std::string(dtype_name(t)) +
                       " input, which needs " + which + " (and not the other imputed list)");
  const int64_t c = x->rank() == 0 ? 1 : x->dim(x->rank() - 1);
  if (imputed.size() != 1 && static_cast<int64_t>(imputed.size()) != c)
    return model_error(ctx.describe() + " has " + std::to_string(imputed.size()) +
                       " imputed values for " + std::to_string(c) +
                       " features (give one per feature or one for all)");
  const double replaced = floating ? ctx.attr_float("replaced_value_float", 0.0f)
                                   : static_cast<double>(ctx.attr_int("replaced_value_int64", 0));
  Tensor y = *x;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double v = y.get_as_double(i);
    if (v == replaced || (std::isnan(replaced) && std::isnan(v)))
      y.set_from_double(i, imputed[imputed.size() == 1 ? 0 : static_cast<size_t>(i % c)]);
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_imputer(KernelRegistry& r) {
  r.add("Imputer", 1, imputer, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
