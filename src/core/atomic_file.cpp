// write_file_atomic: a temporary file beside the target, fsync, rename (see atomic_file.h).
#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace onnxdbg {

int write_all_fd(int fd, std::string_view bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : ENOSPC;
    done += static_cast<size_t>(n);
  }
  return 0;
}

Status write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  auto fail = [&](int err) {
    return invalid_argument("cannot write '" + path.string() + "': " + std::strerror(err));
  };
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::string pattern = (dir / ("." + path.filename().string() + ".tmpXXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) return fail(errno);
  const std::string tmp(name.data());
  auto abandon = [&](int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail(err);
  };
  if (const int err = write_all_fd(fd, bytes)) return abandon(err);
  // mkstemp makes the file 0600; a written file gets the usual permissions (umask applies).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0 || ::fsync(fd) != 0) return abandon(errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return fail(err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return fail(err);
  }
  return Status::ok();
}

}  // namespace onnxdbg
