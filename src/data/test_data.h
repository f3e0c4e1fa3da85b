// ONNX test-data folders (the layout of onnx/backend/test/data/*/test_data_set_N: input_K.pb and
// output_K.pb, each a serialized onnx::TensorProto, or a SequenceProto / OptionalProto where the
// graph declares a sequence or optional) and load_tensors(), which reads model inputs
// from whatever the user points at: such a folder, an .npz, or a single .pb / .npy file.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "core/onnx.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "onnxdbg/value.h"

namespace onnxdbg {

/// Reads input_0.pb, input_1.pb, ... from `dir` (ordered by K, numerically). Each file is an
/// onnx::TensorProto (raw or typed fields, external data resolved against `dir`); its name is the
/// proto's name field, or else the name of the K-th graph input that is not an initializer.
/// Errors (naming the file): kNotFound (no such folder, no input_K.pb in it), kInvalidArgument
/// (a file that does not parse as a TensorProto, no name and no K-th graph input, a name used
/// twice), kUnsupported (the K-th graph input is a sequence or optional: use
/// load_test_data_input_values; a map or sparse tensor), kModelError/kUnsupported from
/// tensor_from_proto.
Expected<std::map<std::string, Tensor>> load_test_data_inputs(const std::filesystem::path& dir,
                                                              const onnx::GraphProto& graph);

/// As load_test_data_inputs, for output_K.pb and the graph's outputs.
Expected<std::map<std::string, Tensor>> load_test_data_outputs(const std::filesystem::path& dir,
                                                               const onnx::GraphProto& graph);

/// As load_test_data_inputs, with values of any kind: where the K-th graph value is declared a
/// sequence the file is read as an onnx::SequenceProto of tensors, where it is an optional as an
/// onnx::OptionalProto (empty, a tensor, or a sequence of tensors); tensors as above. A sequence
/// keeps the declared element type even when empty. Errors: as load_test_data_inputs, and
/// kUnsupported for maps, sparse tensors and nested sequences/optionals.
Expected<std::map<std::string, Value>> load_test_data_input_values(const std::filesystem::path& dir,
                                                                   const onnx::GraphProto& graph);
/// As load_test_data_input_values, for output_K.pb and the graph's outputs.
Expected<std::map<std::string, Value>> load_test_data_output_values(
    const std::filesystem::path& dir, const onnx::GraphProto& graph);

/// Writes `inputs` as input_K.pb and `outputs` as output_K.pb into `dir` (created if missing),
/// K counting in the order of the graph's inputs (initializers excluded) and outputs; graph
/// values absent from the maps are skipped, and each proto carries its name so loading does not
/// depend on K. Existing input_*.pb / output_*.pb files in `dir` are removed first so stale
/// files cannot mix with new ones.
/// Errors: kInvalidArgument (a name that is not a graph input/output, an unwritable folder).
Status save_test_data(const std::filesystem::path& dir, const onnx::GraphProto& graph,
                      const std::map<std::string, Tensor>& inputs,
                      const std::map<std::string, Tensor>& outputs);

/// Reads model inputs from `path`, deciding by what it is:
///   a folder          -> load_test_data_inputs (a test_data_set_N folder)
///   NAME.npz          -> load_npz (keys are input names)
///   NAME.pb           -> one TensorProto; named by its name field, else the model must have
///                        exactly one (non-initializer) input, which names it
///   NAME.npy          -> read_npy; the model must have exactly one input, which names it
/// Errors: kNotFound (missing path), kInvalidArgument (another extension, a single unnamed
/// tensor for a model with several inputs), and those of the functions above.
Expected<std::map<std::string, Tensor>> load_tensors(const std::filesystem::path& path,
                                                     const onnx::GraphProto& graph);

}  // namespace onnxdbg
