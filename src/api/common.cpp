// Messages of the public API's calls (include/onnxdbg/common.h).
#include "onnxdbg/common.h"

#include "reference/openblas_core.h"
#include "report/table.h"

namespace onnxdbg::api {

void add_note(Messages& out, std::string text) {
  out.push_back({Message::Kind::kNote, std::move(text)});
}

void add_warning(Messages& out, std::string text) {
  out.push_back({Message::Kind::kWarning, std::move(text)});
}

void print_messages(const Messages& messages, std::ostream& os, bool with_notes) {
  for (const auto& m : messages) {
    if (m.kind == Message::Kind::kNote && !with_notes) continue;
    os << (m.kind == Message::Kind::kNote ? "onnxdbg: note: " : "onnxdbg: warning: ") << m.text
       << "\n";
  }
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool color_for(int fd) { return report::use_color(fd); }

void restart_with_better_openblas_core(char** argv) {
  reference::restart_with_better_openblas_core(argv);
}

}  // namespace onnxdbg::api
