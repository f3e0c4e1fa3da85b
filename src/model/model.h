// Loading and saving ONNX models (protobuf via the linked ONNX library, src/core/onnx.h), external
// data, and conversion between onnx::TensorProto and Tensor. Nothing here runs a model.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "core/onnx.h"
#include "onnxdbg/model.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// A model as read from disk: the protobuf plus the folder external data is resolved against.
struct LoadedModel {
  onnx::ModelProto proto;
  std::filesystem::path path;         ///< the file it came from
  std::filesystem::path base_dir;     ///< folder for external data (the model file's folder)
  std::vector<std::string> warnings;  ///< e.g. IR or opset newer than the linked ONNX knows
};

/// Highest IR version and default-domain opset the linked ONNX (1.23: IR 14, opset 28) knows.
int64_t max_known_ir_version();
int64_t max_known_opset(const std::string& domain);

/// Reads an ONNX model file (ONNX IR spec, "Models"). External data stays external: tensors are
/// read from their files on demand by tensor_from_proto, so models whose weights exceed 2 GiB load.
/// Errors: kNotFound (no such file), kModelError (not a model: truncated, text, not protobuf;
/// a single protobuf over 2 GiB). IR/opset newer than known adds a warning, not an error.
/// `external_data_dir`, when given, is where external data resolves instead of the file's own
/// folder (a model onnxdbg wrote into a temp folder, whose weights stay in the original's).
Expected<LoadedModel> load_model(const std::filesystem::path& path,
                                 const std::filesystem::path& external_data_dir = {});
/// Parses a model from bytes (e.g. an in-memory candidate). base_dir resolves external data.
Expected<LoadedModel> parse_model(const std::string& bytes, const std::filesystem::path& base_dir,
                                  const std::string& what);
/// Writes `model` to `path`. Errors: kInvalidArgument when the file cannot be written or the
/// model exceeds protobuf's 2 GiB limit.
Status save_model(const onnx::ModelProto& model, const std::filesystem::path& path);

/// Refuses a model holding sparse initializers (GraphProto.sparse_initializer, in any graph) for
/// a part of onnxdbg that reads only dense ones. `who` completes "not supported by ...".
/// Errors: kUnsupported naming the first one and its graph.
Status reject_sparse_initializers(const onnx::ModelProto& model, const std::string& who);

/// The default domain's one spelling: "" for "" and "ai.onnx" (ONNX IR spec, "Operator Sets"),
/// any other domain unchanged. Opset imports, nodes and schemas may spell it either way.
std::string canonical_domain(const std::string& domain);

/// Opset version the model imports for `domain` ("" and "ai.onnx" are the default domain);
/// 0 when not imported.
int64_t model_opset(const onnx::ModelProto& model, const std::string& domain);

/// Converts a TensorProto to a Tensor: raw_data, typed fields (float_data, int32_data for
/// int8/16/32, uint8/16, bool and float16/bfloat16 bit patterns, int64_data, double_data,
/// uint64_data, string_data) and external data (ONNX IR spec "External Tensor Data").
/// External locations are resolved relative to `base_dir`; absolute paths and paths escaping it
/// are refused. Errors: kModelError (size mismatch, bad location, unreadable file),
/// kUnsupported (complex types).
Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto,
                                   const std::filesystem::path& base_dir = {});
/// Converts a Tensor to a TensorProto with raw_data (strings in string_data) and the given name.
onnx::TensorProto tensor_to_proto(const Tensor& t, const std::string& name = {});

/// The declared element type and shape of one graph input or output (ValueSignature,
/// include/onnxdbg/model.h).
ValueSignature value_signature(const onnx::ValueInfoProto& vi);
/// Graph inputs that are not initializers (the values a user must feed).
std::vector<ValueSignature> model_inputs(const onnx::GraphProto& graph);
std::vector<ValueSignature> model_outputs(const onnx::GraphProto& graph);

}  // namespace onnxdbg
