// Writing a file so that it is either complete or not there: every file onnxdbg writes for its
// user (models, .npz/.npy/.json data, HTML pages) goes through write_file_atomic, so a full disk,
// a Ctrl-C or a crash never leaves a half-written file or damages the one it replaces.
#pragma once

#include <filesystem>
#include <string_view>

#include "onnxdbg/status.h"

namespace onnxdbg {

/// Writes `bytes` to `path`: into a new temporary file in the same folder (same file system),
/// flushed to disk (fsync), then renamed over `path` (POSIX rename is atomic). On any failure the
/// temporary file is removed and an existing `path` is left as it was. Errors: kInvalidArgument
/// naming the path and the system's reason ("No space left on device", "Permission denied").
Status write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

/// Writes all of `bytes` to the file descriptor `fd`, retrying short writes and EINTR. Returns 0,
/// or the errno of the write that failed (ENOSPC for a write that wrote nothing).
int write_all_fd(int fd, std::string_view bytes);

}  // namespace onnxdbg
