// onnxdbg::Model: a loaded ONNX model as the public API hands it around. The API's results hold
// one (the model a run, an inspection or a diff read, for the HTML view) and callers pass it back
// (view, write_page). It is a handle: what it holds (the parsed protobuf, onnx::ModelProto) is
// onnxdbg's own, so this header needs neither protobuf nor ONNX's headers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// Declared element type and shape of a graph input/output. Dims that are symbolic carry their
/// name in `dim_params[i]` and -1 in `shape[i]`; unknown dims have -1 and an empty name.
struct ValueSignature {
  std::string name;
  DType dtype = DType::kUndefined;
  bool has_shape = false;
  Shape shape;
  std::vector<std::string> dim_params;
  std::string type_string;  ///< "tensor(float32)", "sequence(...)", for display
};

/// One node of the main graph as the model stores it.
struct NodeInfo {
  std::string name, op_type;
  std::string domain;                           ///< "" for the default domain (ai.onnx)
  std::vector<std::string> inputs, outputs;     ///< "" for an omitted optional input
  std::map<std::string, std::string> metadata;  ///< NodeProto.metadata_props (IR 10, ONNX 1.16+)
};

/// What a model declares about itself (Model::info; Python's onnxdbg.Model).
struct ModelInfo {
  std::vector<ValueSignature> inputs;     ///< graph inputs that are not initializers
  std::vector<ValueSignature> outputs;    ///< graph outputs
  std::vector<NodeInfo> nodes;            ///< the main graph's nodes, in stored order
  std::map<std::string, int64_t> opsets;  ///< opset imports by domain ("ai.onnx" for "")
  int64_t ir_version = 0;
  std::string producer;  ///< producer_name, then producer_version after a space when set
  std::vector<std::string> warnings;  ///< the load's (Model::warnings)
};

/// The parsed model, its file and its external-data folder (src/model/model.h; onnxdbg's own
/// modules read it, the public API never needs its members).
struct LoadedModel;

/// A loaded ONNX model (ONNX IR spec, "Models"), immutable and shared: copies refer to one model,
/// which lives while a copy does. Default-constructed it holds none (empty()).
class Model {
 public:
  Model() = default;
  /// Takes `loaded` over (onnxdbg's modules, after load_model or an edit).
  explicit Model(LoadedModel&& loaded);
  /// Reads an ONNX model file; external data stays in its files, read when a tensor is needed.
  /// Errors (src/model/model.h's load_model): kNotFound for no such file; kModelError for a file
  /// that is not a model (truncated, text, a protobuf over 2 GiB).
  static Expected<Model> load(const std::filesystem::path& path);

  bool empty() const { return impl_ == nullptr; }
  /// The file it was read from; "" when empty or built in memory.
  std::filesystem::path path() const;
  /// The load's warnings (an IR version or opset newer than the linked ONNX knows); none when
  /// empty.
  std::vector<std::string> warnings() const;
  /// The signature, nodes and header of the model. Empty: an empty ModelInfo.
  ModelInfo info() const;
  /// The model itself, for onnxdbg's modules. Must not be empty (a broken invariant, asserted).
  const LoadedModel& loaded() const;

 private:
  std::shared_ptr<const LoadedModel> impl_;
};

}  // namespace onnxdbg
