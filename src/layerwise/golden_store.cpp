// The golden values of the layerwise pass's one reference run (see golden_store.h): a spill file
// written as the reference runs, memory-mapped for the batches and the isolation after it.
#include "layerwise/golden_store.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstring>

#include "core/run_limits.h"

namespace onnxdbg::layerwise_detail {
namespace {

constexpr uint64_t kAlign = 64;  // as allocate_tensor_bytes aligns a buffer

uint64_t page_size() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

/// Writes all `n` bytes at `offset`; false with errno set when the system refuses.
bool write_all(int fd, const std::byte* p, uint64_t n, uint64_t offset) {
  while (n > 0) {
    const ssize_t w = pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = ENOSPC;
      return false;
    }
    p += w;
    n -= static_cast<uint64_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return true;
}

/// Golden values are read, never written: a view's buffer is not freed by its tensor.
void keep_mapping(void*) noexcept {}

}  // namespace

Expected<std::unique_ptr<GoldenStore>> GoldenStore::create(const std::filesystem::path& dir,
                                                           uint64_t max_bytes, std::string limit) {
  std::unique_ptr<GoldenStore> s(new GoldenStore());
  s->dir_ = dir;
  s->limit_ = std::move(limit);
  s->max_bytes_ = max_bytes;
  const std::filesystem::path path = dir / "golden_values.spill";
  s->fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (s->fd_ < 0)
    return not_found(fmt::format("cannot create the golden values' spill file in '{}': {}",
                                 dir.string(), std::strerror(errno)));
  unlink(path.c_str());  // the open descriptor keeps it until the process ends, however it ends
  return s;
}

GoldenStore::~GoldenStore() {
  if (map_) munmap(map_, map_bytes_);
  if (fd_ >= 0) close(fd_);
}

std::optional<uint64_t> GoldenStore::free_disk_bytes(const std::filesystem::path& dir) {
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  const uint64_t free = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  return free > kSpillDiskReserve ? free - kSpillDiskReserve : 0;
}

bool GoldenStore::put(size_t index, const std::string& name, const Tensor& value) {
  if (stopped_ || index != entries_.size()) return false;
  Entry e;
  e.name = name;
  e.dtype = value.dtype();
  e.shape = value.shape();
  if (value.dtype() == DType::kString) {
    e.held = value;
  } else {
    e.offset = (end_ + kAlign - 1) / kAlign * kAlign;
    e.bytes = value.nbytes();
    if (e.offset + e.bytes > max_bytes_) {
      stopped_ = true;
      stop_reason_ = fmt::format(
          "the golden values from tensor '{}' on would take the spill file in '{}' past {} ({})",
          name, dir_.string(), memory_size_string(max_bytes_), limit_);
      return false;
    }
    if (!write_all(fd_, value.raw(), e.bytes, e.offset)) {
      stopped_ = true;
      stop_reason_ =
          fmt::format("writing the golden value of '{}' to the spill file in '{}' failed: {}", name,
                      dir_.string(), std::strerror(errno));
      return false;
    }
    end_ = e.offset + e.bytes;
  }
  by_name_.emplace(name, entries_.size());
  entries_.push_back(std::move(e));
  return true;
}

void GoldenStore::put_constant(const std::string& name, const Tensor& value) {
  constants_.insert_or_assign(name, value);
}

Status GoldenStore::seal() {
  sealed_ = true;
  if (end_ == map_bytes_) return Status::ok();
  if (map_) munmap(map_, map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
  // Shared, not private: a private writable mapping counts against RLIMIT_DATA (onnxdbg batch
  // --max-memory), which a spill file of several GiB would exceed. Nothing writes to the views;
  // were something to, the write would stay in the file instead of faulting.
  void* p = mmap(nullptr, end_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED)
    return internal_error(fmt::format("cannot map the golden values' spill file ({}): {}",
                                      memory_size_string(end_), std::strerror(errno)));
  map_ = static_cast<std::byte*>(p);
  map_bytes_ = end_;
  return Status::ok();
}

Expected<Tensor> GoldenStore::get(size_t index) const {
  if (!sealed_ || index >= entries_.size())
    return invalid_argument(fmt::format("golden value {} is not in the store", index));
  const Entry& e = entries_[index];
  if (e.held) return *e.held;
  if (e.offset + e.bytes > map_bytes_)
    return invalid_argument(fmt::format("value {} was stored after the last seal()", index));
  return Tensor::adopt(e.dtype, e.shape,
                       ByteBuffer::adopt(map_ + e.offset, e.bytes, keep_mapping, nullptr));
}

std::optional<Tensor> GoldenStore::find(const std::string& name) const {
  if (auto c = constants_.find(name); c != constants_.end()) return c->second;
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  auto t = get(it->second);
  if (!t) return std::nullopt;
  return std::move(*t);
}

void GoldenStore::release(size_t begin, size_t end) const {
  if (!map_ || begin >= end || begin >= entries_.size()) return;
  end = std::min(end, entries_.size());
  const uint64_t page = page_size();
  const uint64_t from = entries_[begin].offset / page * page;
  const uint64_t to = std::min(
      map_bytes_, (entries_[end - 1].offset + entries_[end - 1].bytes + page - 1) / page * page);
  if (to > from) madvise(map_ + from, to - from, MADV_DONTNEED);
}

}  // namespace onnxdbg::layerwise_detail
