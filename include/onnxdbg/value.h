// Value: what an ONNX name holds at run time (ONNX IR spec "Types"): a tensor, a sequence (of
// tensors, or of maps as ai.onnx.ml ZipMap returns), a map (ai.onnx.ml "map(K, V)"), or an
// optional holding a tensor, a sequence or nothing.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "onnxdbg/tensor.h"

namespace onnxdbg {

class Value;

/// An ONNX map (ai.onnx.ml, ONNX IR "map(K, V)"): `keys` and `values` are 1-D tensors of equal
/// length, entry i mapping keys[i] to values[i], in the order the producer wrote them (ZipMap:
/// the order of its class labels). Keys are int64 or string (the key types the ai.onnx.ml ops
/// use; ONNX allows any integer type or string); values are any tensor element type (float32 for
/// ZipMap). Keys are unique; Map does not check it (the producer does).
struct Map {
  Tensor keys;
  Tensor values;
  /// Number of entries.
  int64_t size() const { return keys.numel(); }
};

/// An ONNX sequence: of tensors (all of one element type), or of maps (ZipMap's
/// seq(map(int64|string, float))). `elem_type` is the tensors' element type (the maps' value
/// type for a sequence of maps) and is kept even when the sequence is empty (SequenceEmpty's
/// dtype, a declared seq(tensor(float))); kUndefined when no one said. A sequence of maps has
/// `map_key_type` set (kInt64 or kString), holds its elements in `maps` and none in `tensors`;
/// the sequence kernels of the default domain take sequences of tensors only.
struct Sequence {
  DType elem_type = DType::kUndefined;
  std::vector<Tensor> tensors;
  /// kUndefined for a sequence of tensors; the maps' key type for a sequence of maps.
  DType map_key_type = DType::kUndefined;
  std::vector<Map> maps;
  bool holds_maps() const { return map_key_type != DType::kUndefined; }
  /// Number of elements (tensors or maps).
  size_t size() const { return holds_maps() ? maps.size() : tensors.size(); }
};

/// An ONNX optional: nothing, or one tensor or sequence (never an optional: ONNX forbids
/// optional(optional(...))).
struct Optional {
  std::vector<Value> content;  ///< 0 or 1 element; a vector because Value is incomplete here
};

class Value {
 public:
  /// The order is the variant's; kMap came last so the others kept their values.
  enum class Kind { kTensor, kSequence, kOptional, kMap };

  /// An empty tensor (dtype kUndefined), as a default-constructed Tensor.
  Value() = default;
  Value(Tensor t) : v_(std::move(t)) {}    // NOLINT(google-explicit-constructor)
  Value(Sequence s) : v_(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  /// An optional holding `inner` (a tensor or a sequence).
  static Value optional_of(Value inner);
  /// An optional holding nothing.
  static Value none() { return Value(Optional{}); }
  explicit Value(Optional o) : v_(std::move(o)) {}
  Value(Map m) : v_(std::move(m)) {}  // NOLINT(google-explicit-constructor)

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_tensor() const { return kind() == Kind::kTensor; }
  bool is_sequence() const { return kind() == Kind::kSequence; }
  bool is_optional() const { return kind() == Kind::kOptional; }
  bool is_map() const { return kind() == Kind::kMap; }

  /// The tensor; only valid when is_tensor() (checked by assertion).
  const Tensor& tensor() const { return std::get<Tensor>(v_); }
  Tensor& tensor() { return std::get<Tensor>(v_); }
  /// The tensor, or nullptr when this is not a tensor.
  const Tensor* as_tensor() const { return std::get_if<Tensor>(&v_); }
  const Sequence& sequence() const { return std::get<Sequence>(v_); }
  Sequence& sequence() { return std::get<Sequence>(v_); }
  const Sequence* as_sequence() const { return std::get_if<Sequence>(&v_); }
  /// The map; only valid when is_map(). as_map: nullptr when this is not a map.
  const Map& map() const { return std::get<Map>(v_); }
  const Map* as_map() const { return std::get_if<Map>(&v_); }
  /// For an optional: whether it holds a value, and that value (only valid when it does).
  bool has_element() const { return is_optional() && !std::get<Optional>(v_).content.empty(); }
  const Value& element() const { return std::get<Optional>(v_).content.front(); }

  /// False only for a default-constructed Value (an empty tensor), which no kernel produces.
  bool defined() const { return !is_tensor() || !tensor().empty(); }

  /// "a tensor", "a sequence", "an optional", "a map": for "expects a sequence, got a tensor".
  std::string kind_name() const;
  /// "float32[2x3]", "sequence of 3 float32 tensors", "sequence of 2 maps (string to float32)",
  /// "map of 3 entries (int64 to float32)", "optional holding float32[2]", "empty optional": for
  /// error messages and reports.
  std::string describe() const;

 private:
  std::variant<Tensor, Sequence, Optional, Map> v_;
};

/// "a tensor" / "a sequence" / "an optional" / "a map" for a Kind.
std::string value_kind_name(Value::Kind kind);

/// Values of any kind (tensors, sequences, optionals) by name.
using ValueMap = std::map<std::string, Value>;

}  // namespace onnxdbg
