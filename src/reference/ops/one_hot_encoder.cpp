// OneHotEncoder (ai.onnx.ml OneHotEncoder-1): each element of X becomes a row of len(cats) floats
// with a 1 at its category's position (cats_strings for string input, cats_int64s for numbers,
// which are truncated to int64); Y has shape X.shape + [len(cats)]. An unknown category gives
// zeros when `zeros` is 1 (default) and an error naming the node when it is 0.
#include <unordered_map>

#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

Status one_hot_encoder(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const bool strings = x->dtype() == DType::kString;
  const auto cat_ints = ctx.attr_ints("cats_int64s");
  const auto cat_strings = ctx.attr_strings("cats_strings");
  if (cat_ints.empty() == cat_strings.empty())
    return model_error(ctx.describe() + " needs exactly one of cats_int64s and cats_strings");
  if (strings != !cat_strings.empty())
    return model_error(
        ctx.describe() + " has " +
        (strings ? "a string input but cats_int64s" : "a numeric input but cats_strings"));
  const bool zeros = ctx.attr_int("zeros", 1) != 0;
  std::unordered_map<std::string, int64_t> index;
  const auto ncat = static_cast<int64_t>(strings ? cat_strings.size() : cat_ints.size());
  for (int64_t k = 0; k < ncat; ++k)
    index.emplace(strings ? cat_strings[static_cast<size_t>(k)]
                          : std::to_string(cat_ints[static_cast<size_t>(k)]),
                  k);
  Shape shape = x->shape();
  shape.push_back(ncat);
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(DType::kFloat, shape));
  for (int64_t i = 0; i < x->numel(); ++i) {
    const std::string key = strings ? x->strings()[static_cast<size_t>(i)]
                                    : std::to_string(static_cast<int64_t>(x->get_as_double(i)));
    auto it = index.find(key);
    if (it != index.end()) {
      y.data<float>()[i * ncat + it->second] = 1;
    } else if (!zeros) {
      return model_error(ctx.describe() + ": category '" + key +
                         "' is not in the category list and zeros is 0");
    }
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_one_hot_encoder(KernelRegistry& r) {
  r.add("OneHotEncoder", 1, one_hot_encoder, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
