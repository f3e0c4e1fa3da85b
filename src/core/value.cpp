// Value: tensors, sequences, maps and optionals held by one name at run time.
#include "onnxdbg/value.h"

namespace onnxdbg {

Value Value::optional_of(Value inner) {
  assert(!inner.is_optional() && "ONNX has no optional of an optional");
  Optional o;
  o.content.push_back(std::move(inner));
  return Value(std::move(o));
}

std::string value_kind_name(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kTensor:
      return "a tensor";
    case Value::Kind::kSequence:
      return "a sequence";
    case Value::Kind::kOptional:
      return "an optional";
    case Value::Kind::kMap:
      return "a map";
  }
  return "a value";
}

std::string Value::kind_name() const { return value_kind_name(kind()); }

namespace {
std::string describe_tensor(const Tensor& t) {
  return std::string(dtype_name(t.dtype())) + "[" + shape_to_string(t.shape()) + "]";
}
std::string map_types(DType key, DType value) {
  return "(" + std::string(dtype_name(key)) + " to " + std::string(dtype_name(value)) + ")";
}
}  // namespace

std::string Value::describe() const {
  switch (kind()) {
    case Kind::kTensor:
      return describe_tensor(tensor());
    case Kind::kSequence: {
      const auto& s = sequence();
      if (s.holds_maps())
        return "sequence of " + std::to_string(s.maps.size()) + " maps " +
               map_types(s.map_key_type, s.elem_type);
      return "sequence of " + std::to_string(s.tensors.size()) + " " +
             std::string(dtype_name(s.elem_type)) + " tensors";
    }
    case Kind::kMap:
      return "map of " + std::to_string(map().size()) + " entries " +
             map_types(map().keys.dtype(), map().values.dtype());
    case Kind::kOptional:
      return has_element() ? "optional holding " + element().describe() : "empty optional";
  }
  return {};
}

}  // namespace onnxdbg
