// onnxdbg::api::conformance: runs ONNX backend test cases (folders with model.onnx and
// test_data_set_N/, as ONNX's backend test data: onnx/backend/test/data/node/*) on one or more
// backends and tallies pass / fail / unsupported per case (`onnxdbg conformance`).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "onnxdbg/backend_spec.h"
#include "onnxdbg/common.h"
#include "onnxdbg/conformance_case.h"

namespace onnxdbg::api {

struct ConformanceOptions {
  /// Case folders, or folders of case folders (e.g. /usr/share/libonnx-testdata/data/node).
  std::vector<std::filesystem::path> dirs;
  std::vector<BackendSpec> backends;  ///< default: reference
  std::string filter;                 ///< only cases whose folder name contains this text
  double rtol = 1e-3;                 ///< ONNX's backend-test tolerances
  double atol = 1e-7;
};

/// One backend's results, case by case in the order of ConformanceResult::cases.
struct BackendTally {
  BackendSpec spec;
  std::vector<conformance::CaseResult> results;
  int passed = 0, failed = 0, unsupported = 0;
};

struct ConformanceResult {
  std::vector<std::filesystem::path> cases;
  /// Each case's default-domain opset (0 when none or unreadable), in
  /// the order of `cases`.
  std::vector<int64_t> opsets;
  std::vector<BackendTally> tallies;  ///< one per backend, in the options' order
  Messages messages;
  bool any_failed() const;  ///< a case failed on some backend (unsupported ones do not count)
};

/// "pass" | "fail" | "unsupported".
const char* case_status_name(conformance::CaseStatus status);

/// Runs every case on every backend. Errors: kInvalidArgument for no backend, those of
/// create_backend; kNotFound for a folder that does not exist or when no case is found.
/// ctx.cancel stops it between cases (kCancelled).
Expected<ConformanceResult> conformance(const ConformanceOptions& options,
                                        const CallContext& ctx = {});

/// The JSON of `conformance --json`: the first backend's tally at the top level (backend,
/// passed, failed, unsupported, total, cases [{case, opset, status, reason}], by_opset
/// {"N": {passed, failed, unsupported}}) and every backend's in "backends".
nlohmann::json to_json(const ConformanceResult& result);

/// The table `onnxdbg conformance` prints (only cases that did not pass everywhere when
/// `failures_only`), the failure reasons, one summary line per backend, and a table of passed
/// cases per opset and backend ("passed/cases" of that opset).
void print_text(const ConformanceResult& result, std::ostream& os, bool color, bool failures_only);

}  // namespace onnxdbg::api
