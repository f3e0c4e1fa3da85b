// Formatting of Status for people.
#include "onnxdbg/status.h"

namespace onnxdbg {

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  std::string out = message_;
  if (!context_.empty()) {
    out += " (";
    for (size_t i = 0; i < context_.size(); ++i) {
      if (i) out += "; ";
      out += context_[i];
    }
    out += ")";
  }
  return out;
}

}  // namespace onnxdbg
