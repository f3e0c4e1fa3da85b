// Which version of an ONNX op is in force at a model's opset (ONNX "Operator Versioning"): the
// since-version of the newest schema at or below that opset, from the linked ONNX's schemas (1.23,
// src/core/onnx.h). An opset newer than it knows has no version in force (kUnknownVersion).
#pragma once

#include <string>
#include <vector>

namespace onnxdbg::reference {

/// The opset every kernel with an undeclared upper bound was validated at (ONNX 1.12's full
/// conformance suite): 17 for the default domain, 3 for ai.onnx.ml, 1 for
/// ai.onnx.preview.training; 0 for a domain ONNX does not define.
int validated_opset(const std::string& domain);

/// The newest opset the linked ONNX knows for `domain` (28 for ai.onnx in ONNX 1.23); 0 for a
/// domain ONNX does not define.
/// "ai.onnx" equals "".
int newest_known_opset(const std::string& domain);

/// Sorted since-versions of `op_type` in `domain` (deprecated ones included) in the linked ONNX;
/// empty for an op ONNX does not define.
const std::vector<int>& schema_versions(const std::string& domain, const std::string& op_type);

/// The version in force: the newest since-version <= `opset`. kNoSchema when ONNX does not
/// define the op (custom domains); kUnknownVersion when `opset` is newer than newest_known_opset
/// (a newer version may exist) or no version is as old as `opset`.
inline constexpr int kNoSchema = -1;
inline constexpr int kUnknownVersion = 0;
int version_in_force(const std::string& domain, const std::string& op_type, int64_t opset);

}  // namespace onnxdbg::reference
