// apply_backend_limits (backend_limits.h).
#include "backends/backend_limits.h"

#include <fmt/format.h>

namespace onnxdbg {

void apply_backend_limits(std::vector<BackendSpec>& specs, double timeout_seconds,
                          uint64_t max_memory, uint64_t max_iterations) {
  for (auto& s : specs) {
    if (timeout_seconds > 0) s.options.emplace("timeout", fmt::format("{:g}", timeout_seconds));
    if (max_memory > 0 && backend_has_option(s.name, "max_memory"))
      s.options.emplace("max_memory", std::to_string(max_memory));
    if (max_iterations > 0 && backend_has_option(s.name, "max_iterations"))
      s.options.emplace("max_iterations", std::to_string(max_iterations));
  }
}

}  // namespace onnxdbg
