// Constant (ONNX Constant-1/9/11/12/13): produces the tensor held in one of its attributes
// (value, value_float(s), value_int(s), value_string(s)). sparse_value is not supported.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status constant(KernelContext& ctx) {
  static const char* const kForms[] = {"value",         "value_float", "value_floats",
                                       "value_int",     "value_ints",  "value_string",
                                       "value_strings", "sparse_value"};
  const onnx::AttributeProto* found = nullptr;
  for (const char* name : kForms) {
    const auto* a = ctx.find_attr(name);
    if (!a) continue;
    if (found)
      return model_error(ctx.describe() + " sets both '" + found->name() + "' and '" + a->name() +
                         "'; a Constant must set exactly one value attribute");
    found = a;
  }
  if (!found)
    return model_error(ctx.describe() +
                       " has no value attribute (value, value_float(s), value_int(s), "
                       "value_string(s) or sparse_value)");
  const std::string& name = found->name();
  if (name == "value") {
    ODB_ASSIGN_OR_RETURN(Tensor t, ctx.attr_tensor("value"));
    ctx.set_output(0, std::move(t));
  } else if (name == "value_float") {
    ctx.set_output(0, Tensor::scalar<float>(found->f()));
  } else if (name == "value_floats") {
    std::vector<float> v(found->floats().begin(), found->floats().end());
    ctx.set_output(0, Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v));
  } else if (name == "value_int") {
    ctx.set_output(0, Tensor::scalar<int64_t>(found->i()));
  } else if (name == "value_ints") {
    std::vector<int64_t> v(found->ints().begin(), found->ints().end());
    ctx.set_output(0, Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
  } else if (name == "value_string") {
    ctx.set_output(0, Tensor::scalar<std::string>(found->s()));
  } else if (name == "value_strings") {
    std::vector<std::string> v(found->strings().begin(), found->strings().end());
    ctx.set_output(0, Tensor::from_vector<std::string>({static_cast<int64_t>(v.size())}, v));
  } else {
    return unsupported(ctx.describe() +
                       ": sparse_value constants are not supported by the "
                       "reference interpreter");
  }
  return Status::ok();
}

}  // namespace

void register_constant(KernelRegistry& r) {
  r.add("Constant", 1, constant, HalfMode::kNative);
  // value_float(s)/int(s)/string(s) forms
  r.add("Constant", 12, constant, HalfMode::kNative).through(25);
}

}  // namespace onnxdbg::reference
