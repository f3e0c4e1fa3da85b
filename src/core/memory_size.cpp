// Memory sizes for --layerwise-memory and --max-memory (core/run_limits.h): "2GiB", "512MiB",
// "1.5GB" parsed into bytes, and bytes written back for people ("2 GiB").
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/run_limits.h"

namespace onnxdbg {

Expected<uint64_t> parse_memory_size(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  const std::string num = text.substr(0, i);
  std::string unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  char* end = nullptr;
  const double v = num.empty() ? -1 : std::strtod(num.c_str(), &end);
  static const std::map<std::string, double> units = {{"", 1},
                                                      {"b", 1},
                                                      {"k", 1e3},
                                                      {"kb", 1e3},
                                                      {"m", 1e6},
                                                      {"mb", 1e6},
                                                      {"g", 1e9},
                                                      {"gb", 1e9},
                                                      {"t", 1e12},
                                                      {"tb", 1e12},
                                                      {"kib", 1024.0},
                                                      {"mib", 1048576.0},
                                                      {"gib", 1073741824.0},
                                                      {"tib", 1099511627776.0}};
  auto u = units.find(unit);
  if (num.empty() || !end || *end != '\0' || u == units.end()) {
    return invalid_argument(fmt::format(
        "'{}' is not a memory size; write e.g. 2GiB, 512MiB, 1.5GB or a number of bytes", text));
  }
  const double bytes = v * u->second;
  if (!(bytes >= 1) || bytes > std::ldexp(1.0, 60)) {
    return invalid_argument(
        fmt::format("memory size '{}' must be at least 1 byte and at most 1 EiB", text));
  }
  return static_cast<uint64_t>(bytes);
}

std::string memory_size_string(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.3g} {}", v, units[u]);
}

}  // namespace onnxdbg
