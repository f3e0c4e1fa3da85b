// The result of one ONNX backend test case (a folder with model.onnx and test_data_set_N of
// inputs and expected outputs, ONNX's onnx/backend/test/data layout) on one backend: what
// api::conformance reports per case and backend; src/conformance/ runs the cases.
#pragma once

#include <string>

namespace onnxdbg::conformance {

/// Whether the case passed, failed (a wrong value, shape or dtype, or an error), or uses what the
/// backend does not support.
enum class CaseStatus { kPassed, kFailed, kUnsupported };

/// One case on one backend.
struct CaseResult {
  std::string name;  ///< folder name, e.g. "test_add_bcast"
  CaseStatus status = CaseStatus::kFailed;
  std::string reason;  ///< why it failed or is unsupported; empty when passed
};

}  // namespace onnxdbg::conformance
