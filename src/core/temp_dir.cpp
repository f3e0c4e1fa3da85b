// TempDir: mkdtemp under $TMPDIR (or a given parent) and remove_all when done.
#include "core/temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace onnxdbg {

namespace fs = std::filesystem;

Expected<TempDir> TempDir::create(std::string_view prefix, const fs::path& parent) {
  if (prefix.find('/') != std::string_view::npos)
    return invalid_argument("temporary folder prefix '" + std::string(prefix) + "' holds a '/'");
  fs::path dir = parent;
  if (dir.empty()) {
    std::error_code ec;
    dir = fs::temp_directory_path(ec);
    if (ec) return not_found("no temporary folder ($TMPDIR or /tmp): " + ec.message());
  }
  std::string templ = (dir / (std::string(prefix) + "XXXXXX")).string();
  if (!mkdtemp(templ.data())) {
    return not_found("cannot create a temporary folder in " + dir.string() + ": " +
                     std::strerror(errno));
  }
  return TempDir(fs::path(templ));
}

TempDir::~TempDir() { remove(); }

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

fs::path TempDir::release() { return std::exchange(path_, {}); }

void TempDir::remove() noexcept {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);  // best effort: a destructor must not throw
  path_.clear();
}

}  // namespace onnxdbg
