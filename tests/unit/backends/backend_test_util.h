// Helpers for backend tests: a temporary folder that writes text-format models to disk, and
// creating isolated backends from a name and options.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "../test_util.h"
#include "backends/isolated.h"

namespace onnxdbg::testing {

/// A fresh folder under $TMPDIR (make_temp_dir: a TempDir, removed with everything in it when the
/// object dies) that writes text-format models.
class ModelDir {
 public:
  ModelDir() : dir_(make_temp_dir("onnxdbg-test-")) {}
  const std::filesystem::path& path() const { return dir_.path(); }

  /// Parses `text` (ONNX text format) and saves it as `file` in this folder.
  std::filesystem::path write_model(const std::string& text,
                                    const std::string& file = "model.onnx") {
    const auto p = dir_.path() / file;
    const Status st = save_model(parse_text_model(text), p);
    EXPECT_TRUE(st.is_ok()) << st.to_string();
    return p;
  }

 private:
  TempDir dir_;
};

/// An isolated backend; fails the test when creation fails.
inline std::unique_ptr<Backend> isolated(const std::string& name,
                                         std::map<std::string, std::string> options = {}) {
  BackendSpec spec;
  spec.name = name;
  spec.options = std::move(options);
  auto b = make_isolated_backend(spec);
  EXPECT_TRUE(b.has_value()) << (b ? "" : b.status().to_string());
  return b ? std::move(*b) : nullptr;
}

}  // namespace onnxdbg::testing
