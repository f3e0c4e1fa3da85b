// Private to the layerwise module: GoldenStore, the golden values of the pass's one reference run
// kept for the whole pass, so that no batch and no isolation chunk runs the reference again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg::layerwise_detail {

/// Bytes the spill file leaves free on its disk at least, by default (max_spill_bytes).
inline constexpr uint64_t kSpillDiskReserve = uint64_t{1} << 30;

/// The golden value of every compared tensor of one reference run, in topological order: the
/// bytes of each numeric tensor appended to a spill file (64-byte aligned; the file is unlinked as
/// soon as it is created, so it goes away with the process on every exit path, a crash or a kill
/// included), memory-mapped once the run is over (seal()); string tensors and the outputs of
/// Constant nodes in memory. The values handed out are views into the mapping (no copy; a shared
/// mapping, so that it does not count against RLIMIT_DATA); release() drops a range's pages from
/// the process's resident memory (the page cache keeps them). The pass keeps the backend's own
/// values that later segments read (Pass::segment_model) in a second one. Not thread-safe while
/// filling; const calls may run concurrently once sealed.
class GoldenStore {
 public:
  /// A store whose spill file, in folder `dir`, holds at most `max_bytes` bytes; `limit` says
  /// where that limit comes from, for stop_reason() ("the free space of DIR less 1 GiB").
  /// Errors: kNotFound when the file cannot be created there (the message names the folder and
  /// the system's reason).
  static Expected<std::unique_ptr<GoldenStore>> create(const std::filesystem::path& dir,
                                                       uint64_t max_bytes, std::string limit);
  ~GoldenStore();
  GoldenStore(const GoldenStore&) = delete;
  GoldenStore& operator=(const GoldenStore&) = delete;

  /// The largest spill `dir`'s disk takes: its free space (statvfs f_bavail) less
  /// kSpillDiskReserve, 0 when it has less; nullopt when the disk cannot be asked.
  static std::optional<uint64_t> free_disk_bytes(const std::filesystem::path& dir);

  /// Keeps `value` as tensor `index`, the next one (index == covered()). Returns false when the
  /// spill file would grow past its limit or the write fails (full disk): the store then takes
  /// nothing more, stop_reason() says why, and the tensors from `index` on are not stored.
  bool put(size_t index, const std::string& name, const Tensor& value);
  /// Keeps the output of a Constant node (in memory), for the isolation of the nodes reading it.
  void put_constant(const std::string& name, const Tensor& value);
  /// Maps the spill file as written so far: get() and find() work from here on for the values
  /// put before. Putting more and sealing again maps the grown file anew, which invalidates the
  /// views handed out before. Errors: kInternal when mmap fails (the message says why).
  Status seal();

  /// Tensors [0, covered()) are stored.
  size_t covered() const { return entries_.size(); }
  /// The golden value of tensor `index` < covered(): a view valid while the store lives (a copy
  /// for a string tensor). Errors: kInvalidArgument for an index not stored or a store not sealed.
  Expected<Tensor> get(size_t index) const;
  /// The stored value named `name` (a compared tensor or a Constant node's output), as get().
  std::optional<Tensor> find(const std::string& name) const;
  /// Drops the mapped pages of tensors [begin, end) from resident memory (madvise
  /// MADV_DONTNEED): a later get() reads them from the file again.
  void release(size_t begin, size_t end) const;

  /// Bytes written to the spill file.
  uint64_t spilled_bytes() const { return end_; }
  /// Why the store stopped taking values ("" while it takes them all).
  const std::string& stop_reason() const { return stop_reason_; }

 private:
  GoldenStore() = default;
  struct Entry {
    std::string name;
    DType dtype = DType::kUndefined;
    Shape shape;
    uint64_t offset = 0, bytes = 0;  // in the spill file
    std::optional<Tensor> held;      // string tensors
  };

  std::filesystem::path dir_;
  std::string limit_;  // where max_bytes_ comes from
  int fd_ = -1;
  uint64_t max_bytes_ = 0;
  uint64_t end_ = 0;  // bytes written, padding included
  std::vector<Entry> entries_;
  std::map<std::string, size_t> by_name_;
  std::map<std::string, Tensor> constants_;
  std::byte* map_ = nullptr;
  uint64_t map_bytes_ = 0;
  bool sealed_ = false;
  bool stopped_ = false;
  std::string stop_reason_;
};

}  // namespace onnxdbg::layerwise_detail
