// Terminal table layout and colour helpers.
#include "report/table.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace onnxdbg::report {

namespace {
size_t visible_width(const std::string& s) {
  size_t w = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b') {
      while (i < s.size() && s[i] != 'm') ++i;
      continue;
    }
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++w;  // count UTF-8 code points
  }
  return w;
}
}  // namespace

Table::Table(std::vector<std::string> headers, std::vector<Align> align)
    : headers_(std::move(headers)), align_(std::move(align)) {
  align_.resize(headers_.size(), Align::kLeft);
}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& os, int indent) const {
  std::vector<size_t> width(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) {
    width[c] = visible_width(headers_[c]);
    for (const auto& r : rows_) width[c] = std::max(width[c], visible_width(r[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out(static_cast<size_t>(indent), ' ');
    for (size_t c = 0; c < cells.size(); ++c) {
      const size_t pad = width[c] - visible_width(cells[c]);
      if (c) out += "  ";
      if (align_[c] == Align::kRight)
        out += std::string(pad, ' ') + cells[c];
      else
        out += cells[c] + (c + 1 < cells.size() ? std::string(pad, ' ') : "");
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    os << out << "\n";
  };
  line(headers_);
  std::vector<std::string> rule;
  for (size_t c = 0; c < headers_.size(); ++c) rule.emplace_back(width[c], '-');
  line(rule);
  for (const auto& r : rows_) line(r);
}

bool use_color(int fd) { return isatty(fd) && !std::getenv("NO_COLOR"); }

std::string colorize(const std::string& text, const std::string& color, bool on) {
  if (!on) return text;
  const char* code = color == "red"      ? "31"
                     : color == "green"  ? "32"
                     : color == "yellow" ? "33"
                                         : "1";
  return std::string("\x1b[") + code + "m" + text + "\x1b[0m";
}

}  // namespace onnxdbg::report
