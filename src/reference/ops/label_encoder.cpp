// LabelEncoder (ai.onnx.ml LabelEncoder-1/2). Version 1 maps int64 to string by indexing
// classes_strings (default_string when out of range) and string to int64 by position in it
// (default_int64 when absent). Version 2 maps each element through the parallel lists keys_* and
// values_* (float, int64 or string; one of each), default_* of the value type when absent; keys
// match bit for bit, so a NaN key matches NaN. Version 4 also takes keys_tensor, values_tensor and
// default_tensor (1-D tensors of any one element type; a one-element default) in place of the
// lists, the default of a value type without default_* being -1 for integers, -0.0 for floats
// and "_Unused" for strings. Output: X's shape.
#include <unordered_map>

#include "reference/ops/ml_common.h"

namespace onnxdbg::reference {
namespace {

// The bytes of element i, the key it is looked up by (strings as they are).
std::string key_bytes(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kString) return t.strings()[static_cast<size_t>(i)];
  const size_t es = dtype_size(t.dtype());
  return std::string(reinterpret_cast<const char*>(t.raw()) + static_cast<size_t>(i) * es, es);
}

// One of the list attributes `<prefix>_floats|int64s|strings` as a 1-D tensor; kNotFound when
// none is set, kModelError when more than one is.
Expected<Tensor> list_attr(const KernelContext& ctx, const std::string& prefix) {
  int found = 0;
  Tensor t;
  if (auto v = ctx.attr_floats(prefix + "_floats"); ctx.has_attr(prefix + "_floats")) {
    t = Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
    ++found;
  }
  if (auto v = ctx.attr_ints(prefix + "_int64s"); ctx.has_attr(prefix + "_int64s")) {
    t = Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
    ++found;
  }
  if (auto v = ctx.attr_strings(prefix + "_strings"); ctx.has_attr(prefix + "_strings")) {
    t = Tensor::from_vector<std::string>({static_cast<int64_t>(v.size())}, v);
    ++found;
  }
  if (found != 1)
    return model_error(ctx.describe() + " needs exactly one of " + prefix + "_floats, " + prefix +
                       "_int64s and " + prefix + "_strings, got " + std::to_string(found));
  return t;
}

// Y[i] = values[index of X[i] in keys], or def.
Status encode(KernelContext& ctx, const Tensor& x, const Tensor& keys, const Tensor& values,
              const Tensor& def) {
  std::unordered_map<std::string, int64_t> index;
  for (int64_t k = 0; k < keys.numel(); ++k) index.emplace(key_bytes(keys, k), k);
  Tensor y(values.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto it = index.find(key_bytes(x, i));
    if (it == index.end())
      copy_elements(def, 0, y, i, 1);
    else
      copy_elements(values, it->second, y, i, 1);
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status label_encoder_1(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const auto classes = ctx.attr_strings("classes_strings");
  const auto n = static_cast<int64_t>(classes.size());
  if (x->dtype() == DType::kString) {
    std::vector<int64_t> ids(classes.size());
    for (int64_t k = 0; k < n; ++k) ids[static_cast<size_t>(k)] = k;
    return encode(ctx, *x, Tensor::from_vector<std::string>({n}, classes),
                  Tensor::from_vector<int64_t>({n}, ids),
                  Tensor::scalar<int64_t>(ctx.attr_int("default_int64", -1)));
  }
  if (x->dtype() != DType::kInt64)
    return model_error(ctx.describe() + " takes int64 or string input, got " +
                       std::string(dtype_name(x->dtype())));
  Tensor y(DType::kString, x->shape());
  const std::string def = ctx.attr_string("default_string", "_Unused");
  for (int64_t i = 0; i < x->numel(); ++i) {
    const int64_t v = x->data<int64_t>()[i];
    y.strings()[static_cast<size_t>(i)] = v >= 0 && v < n ? classes[static_cast<size_t>(v)] : def;
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status both_forms_error(const KernelContext& ctx, const std::string& prefix, const char* kind) {
  return model_error(ctx.describe() + " has both " + prefix + "_tensor and " + prefix + kind);
}

// keys_tensor / values_tensor (LabelEncoder-4) or else the <prefix>_* lists. Errors: kModelError
// when both forms, or none, are given.
Expected<Tensor> keys_or_values(const KernelContext& ctx, const std::string& prefix) {
  if (!ctx.has_attr(prefix + "_tensor")) return list_attr(ctx, prefix);
  for (const char* kind : {"_floats", "_int64s", "_strings"})
    if (ctx.has_attr(prefix + kind)) return both_forms_error(ctx, prefix, kind);
  ODB_ASSIGN_OR_RETURN(Tensor t, ctx.attr_tensor(prefix + "_tensor"));
  if (t.rank() != 1)
    return model_error(ctx.describe() + ": " + prefix + "_tensor must be 1-D, got shape " +
                       shape_to_string(t.shape()));
  return t;
}

// LabelEncoder-2 and -4 (registered apart: -4 changed the op), one kernel: -4 added the *_tensor
// attributes (any key and value type); a -2 model has only the lists, which keys_or_values reads
// alike.
Status label_encoder_2_4(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(Tensor keys, keys_or_values(ctx, "keys"));
  ODB_ASSIGN_OR_RETURN(Tensor values, keys_or_values(ctx, "values"));
  if (keys.numel() != values.numel())
    return model_error(ctx.describe() + " has " + std::to_string(keys.numel()) + " keys but " +
                       std::to_string(values.numel()) + " values");
  if (x->dtype() != keys.dtype())
    return model_error(ctx.describe() + " has " + std::string(dtype_name(keys.dtype())) +
                       " keys but a " + std::string(dtype_name(x->dtype())) + " input");
  Tensor def;
  if (ctx.has_attr("default_tensor")) {
    ODB_ASSIGN_OR_RETURN(def, ctx.attr_tensor("default_tensor"));
    if (def.numel() != 1 || def.dtype() != values.dtype())
      return model_error(ctx.describe() + ": default_tensor must hold one " +
                         std::string(dtype_name(values.dtype())) + " value, got " +
                         std::string(dtype_name(def.dtype())) + " of shape " +
                         shape_to_string(def.shape()));
  } else if (values.dtype() == DType::kString) {
    def = Tensor::scalar<std::string>(ctx.attr_string("default_string", "_Unused"));
  } else if (values.dtype() == DType::kFloat) {
    def = Tensor::scalar<float>(ctx.attr_float("default_float", -0.0f));
  } else if (values.dtype() == DType::kInt64) {
    def = Tensor::scalar<int64_t>(ctx.attr_int("default_int64", -1));
  } else {
    ODB_ASSIGN_OR_RETURN(def, Tensor::make(values.dtype(), {}));
    def.set_from_double(0, is_floating(values.dtype()) ? -0.0 : -1.0);
  }
  return encode(ctx, *x, keys, values, def);
}

}  // namespace

void register_label_encoder(KernelRegistry& r) {
  r.add("LabelEncoder", 1, label_encoder_1, HalfMode::kNative, kMlDomain);
  r.add("LabelEncoder", 2, label_encoder_2_4, HalfMode::kNative, kMlDomain);
  r.add("LabelEncoder", 4, label_encoder_2_4, HalfMode::kNative, kMlDomain);
}

}  // namespace onnxdbg::reference
