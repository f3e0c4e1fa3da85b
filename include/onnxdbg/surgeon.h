// onnxdbg::api::surgeon: edit a model as Polygraphy's surgeon does (sanitize: fix input shapes,
// fold constants, clean up, reorder; extract a subgraph; convert or declare the opset; convert to
// float16),
// check the result with lint and write it (`onnxdbg surgeon ...`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "onnxdbg/backend_spec.h"
#include "onnxdbg/common.h"
#include "onnxdbg/compare.h"
#include "onnxdbg/surgeon_options.h"

namespace onnxdbg::api {

/// The subgraph between given tensors (surgeon::extract).
struct ExtractOperation {
  std::vector<surgeon::ExtractTensor> inputs, outputs;
};
/// The default-domain opset, converted by ONNX's version converter.
struct ConvertOpsetOperation {
  int64_t opset = 0;
};
/// The default-domain opset declared, no node converted (surgeon::set_opset).
struct SetOpsetOperation {
  int64_t opset = 0;
};

struct SurgeonOptions {
  std::filesystem::path model;
  std::filesystem::path output;  ///< where the edited model is written (external data beside)
  /// Write the result even when lint finds errors in it (the result says `forced`).
  bool force = false;
  using Operation = std::variant<surgeon::SanitizeOptions, ExtractOperation, ConvertOpsetOperation,
                                 SetOpsetOperation, surgeon::Fp16Options>;
  Operation operation;  ///< what to do
  /// After a value-preserving edit (sanitize, convert-opset) is written, the written model and
  /// the original run on each of these backends with the same generated inputs (seed 1, values
  /// in [0,1], the written model's input shapes) and their outputs are compared with
  /// `verify_tolerance` (OutputCheck). Empty: no check. The CLI's default is reference and
  /// onnxruntime (`--verify-backends`, `--no-verify`).
  std::vector<BackendSpec> verify_backends;
  Tolerance verify_tolerance;
};

/// One backend's check that the written model computes the original's outputs.
struct OutputCheck {
  std::string backend;       ///< the spec as given ("onnxruntime")
  std::string error;         ///< why there is no comparison (a model failed to load or run)
  bool pass = false;         ///< every output of the original matched within the tolerance
  double max_abs_error = 0;  ///< largest absolute error over the outputs
  std::string worst_output;  ///< the output with that error
  std::string reason;        ///< the first failing output and why ("output 'y': 3 of 10 ...")
};

// clang-tidy sees a throw in nlohmann::json's move constructor (it asserts an invariant).
struct SurgeonResult {  // NOLINT(bugprone-exception-escape)
  std::string command;  ///< "sanitize", "extract", "convert-opset", "set-opset" or "to-fp16"
  std::filesystem::path model, output;
  /// What the edit did, one line ("extracted 3 of 10 nodes: 1 input, 1 output").
  std::string summary;
  nlohmann::json details;  ///< the edit's figures (the command's key in --json)
  surgeon::EditCheck check;
  int64_t nodes = 0;  ///< nodes of the edited model, subgraphs included
  bool written = false;
  bool forced = false;  ///< written although the check found errors
  /// Set when the check found errors and `force` was not given: nothing was written.
  Status refused;
  /// The written model against the original, one entry per verify backend; empty when not
  /// checked (`verification_note` then says why, unless no check was asked for).
  std::vector<OutputCheck> verification;
  std::string verification_note;
  /// True when some backend ran both models and their outputs differ beyond the tolerance.
  bool outputs_changed() const;
  Messages messages;
};

/// Loads options.model, applies the operation, checks the result with lint and writes it.
/// Errors: those of load_model and of the operation (an unknown tensor to extract, a converter
/// failure, ...), those of writing; a result lint refuses is returned with `refused` set.
Expected<SurgeonResult> surgeon(const SurgeonOptions& options);

/// The JSON of `surgeon ... --json`: command, model, output, written, forced, nodes, check,
/// verification {backends [{backend, error, pass, max_abs_error, worst_output, reason}], note}
/// and the command's details under its name.
nlohmann::json to_json(const SurgeonResult& result);

/// What `onnxdbg surgeon ...` prints: the summary, then "wrote OUT (N nodes)" once written.
void print_text(const SurgeonResult& result, std::ostream& os);

}  // namespace onnxdbg::api
