// TempDir: a private folder (mkdtemp, mode 0700) removed with everything in it when its owner
// goes away. The one temporary-folder helper of onnxdbg: commands keep their scratch files in
// one, and every test writes only under its own.
#pragma once

#include <filesystem>
#include <string_view>

#include "onnxdbg/status.h"

namespace onnxdbg {

/// Owns a freshly created folder and removes its whole tree on destruction (errors ignored:
/// never throws). Move-only; a moved-from TempDir owns nothing.
class TempDir {
 public:
  /// Creates `parent`/`prefix`XXXXXX (six random characters, mode 0700). `parent` defaults to
  /// std::filesystem::temp_directory_path(), i.e. $TMPDIR when set, else /tmp. Errors:
  /// kInvalidArgument when `prefix` holds a '/', kNotFound when the parent cannot be found or
  /// the folder cannot be created there (message names the path and the system's reason).
  static Expected<TempDir> create(std::string_view prefix,
                                  const std::filesystem::path& parent = {});

  TempDir() = default;  ///< owns nothing; path() is empty
  ~TempDir();
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// The folder (absolute when the parent was); empty after release() or a move.
  const std::filesystem::path& path() const { return path_; }
  /// Keeps the folder on disk: returns its path and owns nothing afterwards.
  std::filesystem::path release();

 private:
  explicit TempDir(std::filesystem::path path) : path_(std::move(path)) {}
  void remove() noexcept;

  std::filesystem::path path_;
};

}  // namespace onnxdbg
