// Which version of an ONNX op is in force at a model's opset (ONNX "Operator Versioning"): the
// since-version of the newest schema at or below that opset. Known from the linked libonnx and from
// a table of ONNX 1.23's versions (onnx_op_versions.inc), so that an opset newer than the linked
// libonnx still names the version in force instead of silently meaning an older one.
#pragma once

#include <string>
#include <vector>

namespace onnxdbg::reference {

/// The opset every kernel with an undeclared upper bound was validated at (ONNX 1.12's full
/// conformance suite): 17 for the default domain, 3 for ai.onnx.ml, 1 for
/// ai.onnx.preview.training; 0 for a domain ONNX does not define.
int validated_opset(const std::string& domain);

/// The newest opset known for `domain` (the linked libonnx or the ONNX 1.23 table, whichever is
/// newer); 0 for a domain ONNX does not define. "ai.onnx" equals "".
int newest_known_opset(const std::string& domain);

/// Sorted since-versions of `op_type` in `domain` (deprecated ones included), from the linked
/// libonnx and the ONNX 1.23 table together; empty for an op ONNX does not define.
const std::vector<int>& schema_versions(const std::string& domain, const std::string& op_type);

/// The version in force: the newest since-version <= `opset`. kNoSchema when ONNX does not
/// define the op (custom domains); kUnknownVersion when `opset` is newer than newest_known_opset
/// (a newer version may exist) or no version is as old as `opset`.
inline constexpr int kNoSchema = -1;
inline constexpr int kUnknownVersion = 0;
int version_in_force(const std::string& domain, const std::string& op_type, int64_t opset);

/// The linked libonnx's newest opset for `domain` (17 for Debian's 1.12); 0 when unknown.
int linked_opset(const std::string& domain);

}  // namespace onnxdbg::reference
