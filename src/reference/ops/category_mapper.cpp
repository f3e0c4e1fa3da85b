// CategoryMapper (ai.onnx.ml CategoryMapper-1): maps strings to int64 (input string: the entry of
// cats_int64s at the string's position in cats_strings, default_int64 when absent) or int64 to
// strings (the reverse, default_string). Output: X's shape.
#include <unordered_map>

#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status category_mapper(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const auto ints = ctx.attr_ints("cats_int64s");
  const auto strings = ctx.attr_strings("cats_strings");
  if (ints.size() != strings.size())
    return model_error(ctx.describe() + " has " + std::to_string(ints.size()) +
                       " cats_int64s but " + std::to_string(strings.size()) + " cats_strings");
  if (x->dtype() == DType::kString) {
    std::unordered_map<std::string, int64_t> m;
    for (size_t k = 0; k < ints.size(); ++k) m.emplace(strings[k], ints[k]);
    const int64_t def = ctx.attr_int("default_int64", -1);
    Tensor y(DType::kInt64, x->shape());
    for (int64_t i = 0; i < x->numel(); ++i) {
      auto it = m.find(x->strings()[static_cast<size_t>(i)]);
      y.data<int64_t>()[i] = it == m.end() ? def : it->second;
    }
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  if (x->dtype() != DType::kInt64)
    return model_error(ctx.describe() + " takes int64 or string input, got " +
                       std::string(dtype_name(x->dtype())));
  std::unordered_map<int64_t, std::string> m;
  for (size_t k = 0; k < ints.size(); ++k) m.emplace(ints[k], strings[k]);
  const std::string def = ctx.attr_string("default_string", "_Unused");
  Tensor y(DType::kString, x->shape());
  for (int64_t i = 0; i < x->numel(); ++i) {
    auto it = m.find(x->data<int64_t>()[i]);
    y.strings()[static_cast<size_t>(i)] = it == m.end() ? def : it->second;
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_category_mapper(KernelRegistry& r) {
  r.add("CategoryMapper", 1, category_mapper, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
