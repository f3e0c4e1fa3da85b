// Conformance of the reference backend on Debian's libonnx-testdata (ONNX 1.12 backend tests):
// every case whose ops the reference supports (a kernel or a runnable function body, the same
// decision Interpreter::create makes) must match its output_K.pb. Set
// ONNXDBG_CONFORMANCE_FILTER=substring to run a subset; the pass count is printed.
#include "conformance/conformance.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>

#include "backends/reference/reference_backend.h"
#include "data/test_data.h"
#include "model/model.h"
#include "reference/interpreter.h"

namespace onnxdbg {
namespace {

const char* kRoot = "/usr/share/libonnx-testdata/data";

// The load-time check of the interpreter (reference::op_support for every op at the model's
// opset, function bodies included), so the test claims exactly the cases the backend accepts.
bool reference_supports(const std::filesystem::path& case_dir) {
  auto m = load_model(case_dir / "model.onnx");
  return m && reference::find_missing_kernels(m->proto).empty();
}

// Cases whose expected values come from an unseeded random generator (numpy's global state when
// ONNX made the data), so no implementation can reproduce them: each output is checked for its
// shape, its dtype and values in {0, 1}.
const std::map<std::string, std::string> kRandomCases = {
    {"test_bernoulli", "unseeded Bernoulli"},
    {"test_bernoulli_double", "unseeded Bernoulli"},
    {"test_bernoulli_double_expanded", "unseeded RandomUniformLike"},
    {"test_bernoulli_expanded", "unseeded RandomUniformLike"},
    {"test_bernoulli_seed", "the data was drawn from numpy's global state, not from the seed"},
    {"test_bernoulli_seed_expanded",
     "the data was drawn from numpy's global state, not from the seed"},
};

// Cases where ONNX 1.12's test data itself is at fault, each with the reason. The test fails if
// one of them starts passing (so the list stays honest) or any other case fails.
const std::map<std::string, std::string> kKnownDataErrors = {
    {"test_adam_multiple",
     "expected values were computed with epsilon = 0.01 but the node has no epsilon attribute, so "
     "the schema default 1e-6 applies (test_adam sets epsilon and passes)"},
    {"test_cast_FLOAT_to_BFLOAT16",
     "expected values were made by truncating to bfloat16; the reference rounds to nearest even, "
     "as ONNX Runtime and Cast-19 do (1-ulp differences)"},
    {"test_castlike_BFLOAT16_to_FLOAT", "input 'like' is declared 3x4 but the data is shape [1]"},
    {"test_castlike_BFLOAT16_to_FLOAT_expanded",
     "input 'like' is declared 3x4 but the data is shape [1]"},
    {"test_castlike_FLOAT_to_BFLOAT16", "input 'like' is declared 3x4 but the data is shape [1]"},
    {"test_castlike_FLOAT_to_BFLOAT16_expanded",
     "input 'like' is declared 3x4 but the data is shape [1]"},
};

TEST(Conformance, ReferenceMatchesOnnxBackendTestData) {
  namespace fs = std::filesystem;
  if (!fs::exists(kRoot)) GTEST_SKIP() << "libonnx-testdata is not installed";
  const char* filter = std::getenv("ONNXDBG_CONFORMANCE_FILTER");
  std::vector<fs::path> roots;
  for (const char* sub : {"node", "pytorch-converted", "pytorch-operator", "simple"})
    roots.push_back(fs::path(kRoot) / sub);
  auto cases = conformance::find_cases(roots);
  ASSERT_GT(cases.size(), 1000u);
  auto backend = make_reference_backend(BackendSpec{"reference", {}});
  int claimed = 0, passed = 0, skipped = 0, known_failures = 0, unsupported_types = 0;
  for (const auto& dir : cases) {
    const std::string name = dir.filename().string();
    if (filter && name.find(filter) == std::string::npos) continue;
    if (!reference_supports(dir)) {
      ++skipped;
      continue;
    }
    ++claimed;
    if (kRandomCases.count(name)) {
      const auto r = conformance::run_random_case(dir, *backend);
      EXPECT_EQ(r.reason, "") << name;
      if (r.status == conformance::CaseStatus::kPassed) ++passed;
      std::cout << "random: " << name << " checked by shape, dtype and range ("
                << kRandomCases.at(name) << ")\n";
      continue;
    }
    auto r = conformance::run_case(dir, *backend);
    if (r.status == conformance::CaseStatus::kUnsupported) {
      // Values the reference does not model (maps, sparse tensors), or a function body that
      // cannot be built for this node.
      std::cout << "unsupported: " << name << ": " << r.reason << "\n";
      --claimed;
      ++unsupported_types;
      continue;
    }
    const bool known = kKnownDataErrors.count(name) > 0;
    if (r.status == conformance::CaseStatus::kPassed) {
      ++passed;
      EXPECT_FALSE(known) << name << " now passes; remove it from kKnownDataErrors";
    } else if (known) {
      ++known_failures;
      std::cout << "known test-data error: " << name << ": " << kKnownDataErrors.at(name) << "\n";
    } else {
      ADD_FAILURE() << dir.parent_path().filename().string() << "/" << name << ": " << r.reason;
    }
  }
  std::cout << "conformance: reference passed " << passed << " of " << claimed
            << " cases whose ops it supports (" << known_failures << " known test-data errors; "
            << unsupported_types << " use unsupported values; " << skipped
            << " cases use other ops)\n";
}

}  // namespace
}  // namespace onnxdbg
