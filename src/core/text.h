// Small helpers for the sentences onnxdbg prints.
#pragma once

#include <fmt/format.h>

#include <string>

namespace onnxdbg {

/// "1 node", "3 nodes": `n` and the noun that agrees with it (`one` when n == 1, else `many`).
template <class Count>
std::string plural(Count n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace onnxdbg
