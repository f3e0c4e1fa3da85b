// What the CLI tests share: a fresh folder per test to run the binary in, the usage-error check,
// and Polygraphy's JSON form of an array.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "data/npy.h"
#include "data/polygraphy_json.h"
#include "model/model.h"
#include "onnxdbg/tensor.h"
#include "test_util.h"

namespace onnxdbg::testing {

/// A test with a folder of its own, dir_ (a TempDir under $TMPDIR named after the suite and the
/// test, so parallel ctest runs never share one), removed after the test.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    tmp_ =
        make_temp_dir("onnxdbg_" + std::string(info->test_suite_name()) + "_" + info->name() + "_");
    dir_ = tmp_.path();
  }

  /// Writes the model in ONNX text format `text` to dir_/`name`; a test failure when it does not
  /// parse or save.
  void write_model(const std::string& name, const std::string& text) {
    const Status st = save_model(parse_text_model(text), dir_ / name);
    ASSERT_TRUE(st.is_ok()) << st.to_string();
  }

  TempDir tmp_;
  std::filesystem::path dir_;
};

/// `r` is a usage error: exit status 2, one line on stderr, "onnxdbg: error: ..." holding
/// `needle`, and nothing on stdout.
inline void expect_usage_error(const CliResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err.rfind("onnxdbg: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

/// An array as Polygraphy's JSON files hold it: {"array": base64 of np.save bytes (here onnxdbg's
/// npy writer), "polygraphy_class": "ndarray"}.
inline nlohmann::json polygraphy_ndarray(const Tensor& t) {
  return {{"array", base64_encode(write_npy(t))}, {"polygraphy_class", "ndarray"}};
}

}  // namespace onnxdbg::testing
