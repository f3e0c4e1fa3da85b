// What this process may still allocate (core/run_limits.h): the address-space and data limits
// (getrlimit against /proc/self/status) and the memory cgroup's limit against its use, so that a
// tensor the kernel would refuse is refused first in a sentence instead of std::bad_alloc.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/run_limits.h"

namespace onnxdbg {

namespace {

// A limit as the kernel reports it: RLIM_INFINITY, and cgroup limits of 2^62 and more (v1
// writes its "unlimited" as a page-rounded 2^63-1), mean none.
uint64_t limit_or_none(uint64_t v) { return v >= (uint64_t{1} << 62) ? kNoMemoryLimit : v; }

// "VmSize:   123456 kB" in /proc/self/status, in bytes; 0 when absent.
uint64_t status_bytes(const std::string& status, const std::string& key) {
  const size_t at = status.find("\n" + key + ":");
  if (at == std::string::npos) return 0;
  std::istringstream is(status.substr(at + key.size() + 2, 40));
  uint64_t kib = 0;
  is >> kib;
  return kib * 1024;
}

std::string read_small_file(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

// The first number in a cgroup file; nullopt for "max" (v2's no limit) or an unreadable file.
std::optional<uint64_t> cgroup_number(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::string word;
  if (!(f >> word) || word.empty() || word[0] < '0' || word[0] > '9') return std::nullopt;
  return std::strtoull(word.c_str(), nullptr, 10);
}

// A field of a cgroup's memory.stat ("inactive_file 135168"), 0 when absent.
uint64_t stat_field(const std::filesystem::path& stat, const std::string& key) {
  std::istringstream lines(read_small_file(stat));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(key + " ", 0) == 0)
      return std::strtoull(line.c_str() + key.size() + 1, nullptr, 10);
  return 0;
}

// The smallest room (limit minus use) over this process's memory cgroup and its ancestors,
// cgroup v2 first, then v1. /proc/self/cgroup names the cgroup's path below the hierarchy's
// root; inside a container that root is mounted at /sys/fs/cgroup itself, so each level is
// tried as named and the mount's top as well.
void read_cgroup(ProcessMemoryFacts& facts) {
  const std::filesystem::path root = "/sys/fs/cgroup";
  std::istringstream lines(read_small_file("/proc/self/cgroup"));
  uint64_t best_room = kNoMemoryLimit;
  auto consider = [&](const std::filesystem::path& dir, bool v2) {
    const char* max_file = v2 ? "memory.max" : "memory.limit_in_bytes";
    const char* used_file = v2 ? "memory.current" : "memory.usage_in_bytes";
    const auto limit = cgroup_number(dir / max_file);
    if (!limit || limit_or_none(*limit) == kNoMemoryLimit) return;
    // Page cache the kernel would drop before failing an allocation does not count as used (as
    // the working set of container runtimes: usage minus inactive file pages).
    uint64_t used = cgroup_number(dir / used_file).value_or(0);
    const uint64_t cache =
        stat_field(dir / "memory.stat", v2 ? "inactive_file" : "total_inactive_file");
    used = cache < used ? used - cache : 0;
    const uint64_t room = used >= *limit ? 0 : *limit - used;
    if (room < best_room) {
      best_room = room;
      facts.cgroup_limit = *limit;
      facts.cgroup_used = used;
      facts.cgroup_limit_file = max_file;
    }
  };
  for (std::string line; std::getline(lines, line);) {
    // "0::/user.slice/..." (v2) or "4:memory:/docker/..." (v1)
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::filesystem::path rel = line.substr(b + 1);
    const bool v2 = line.compare(0, a, "0") == 0 && controllers.empty();
    const bool v1 = controllers == "memory" || controllers.find("memory,") == 0 ||
                    controllers.find(",memory") != std::string::npos;
    if (!v1 && !v2) continue;
    const std::filesystem::path base = v2 ? root : root / "memory";
    for (std::filesystem::path p = rel.relative_path(); !p.empty(); p = p.parent_path())
      consider(base / p, v2);
    consider(base, v2);
  }
}

}  // namespace

ProcessMemoryFacts read_process_memory_facts() {
  ProcessMemoryFacts facts;
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    facts.address_space_limit = limit_or_none(rl.rlim_cur);
  if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    facts.data_limit = limit_or_none(rl.rlim_cur);
  if (facts.address_space_limit != kNoMemoryLimit || facts.data_limit != kNoMemoryLimit) {
    const std::string status = "\n" + read_small_file("/proc/self/status");
    facts.address_space_used = status_bytes(status, "VmSize");
    facts.data_used = status_bytes(status, "VmData");
  }
  read_cgroup(facts);
  return facts;
}

MemoryRoom memory_room(const ProcessMemoryFacts& f) {
  MemoryRoom room;
  auto consider = [&](uint64_t limit, uint64_t used, const char* what, const char* how) {
    if (limit == kNoMemoryLimit) return;
    const uint64_t left = used >= limit ? 0 : limit - used;
    if (left >= room.bytes) return;
    room.bytes = left;
    room.limit = fmt::format("its {} of {} ({})", what, memory_size_string(limit), how);
  };
  consider(f.address_space_limit, f.address_space_used, "address-space limit", "ulimit -v");
  consider(f.data_limit, f.data_used, "data limit", "ulimit -d");
  consider(f.cgroup_limit, f.cgroup_used, "cgroup's memory limit", f.cgroup_limit_file);
  return room;
}

}  // namespace onnxdbg
