// Runs ONNX backend test cases (a folder with model.onnx and test_data_set_N/{input,output}_K.pb,
// as shipped in onnx/backend/test/data and Debian's libonnx-testdata) on a backend and checks the
// outputs with the ONNX backend test's tolerances (rtol 1e-3, atol 1e-7 unless overridden).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/onnx.h"
#include "model/model.h"
#include "onnxdbg/conformance_case.h"
#include "onnxdbg/status.h"

namespace onnxdbg::conformance {

struct ConformanceOptions {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// Folders under each of `roots` that contain a model.onnx (the roots themselves included),
/// sorted by name.
std::vector<std::filesystem::path> find_cases(const std::vector<std::filesystem::path>& roots);

/// Op types (domain-qualified as "domain:Op" for non-default domains) used by a case's model,
/// subgraphs included. Errors: kModelError when the model cannot be read.
Expected<std::vector<std::string>> case_op_types(const std::filesystem::path& case_dir);

/// Runs every test_data_set_N of one case on `backend` (Session::run_values, so sequence and
/// optional inputs and outputs are read and compared) and compares each output element-wise:
/// |actual - expected| <= atol + rtol * |expected|, NaN matching NaN, shapes and dtypes equal;
/// sequences element by element (equal lengths), optionals by presence and then content.
/// A model the backend refuses as unsupported gives kUnsupported; other errors give kFailed.
/// `model` is the case's model.onnx already read (the case runs without reading it again).
CaseResult run_case(const std::filesystem::path& case_dir, const LoadedModel& model,
                    Backend& backend, const ConformanceOptions& options = {});
/// As above, reading the case's model.onnx first (a file that cannot be read is kFailed).
CaseResult run_case(const std::filesystem::path& case_dir, Backend& backend,
                    const ConformanceOptions& options = {});

/// Runs test_data_set_0 of a case whose expected values come from an unseeded random generator
/// (ONNX 1.12's Bernoulli cases: numpy's global state made the data, so no implementation can
/// reproduce it) and checks what can be checked: every expected output is produced with the
/// expected dtype and shape and holds only 0 and 1. kPassed, or kFailed with the first reason
/// ("output 'y' holds 0.5"); reading or running errors give kFailed with their message.
CaseResult run_random_case(const std::filesystem::path& case_dir, Backend& backend);

}  // namespace onnxdbg::conformance
