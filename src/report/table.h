// Aligned text tables for the terminal: columns sized to their widest cell, numbers
// right-aligned, optional colour on a TTY.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "compare/error_text.h"  // short_number

namespace onnxdbg::report {

enum class Align { kLeft, kRight };

class Table {
 public:
  /// Column headers and their alignment (defaults to left for every column).
  explicit Table(std::vector<std::string> headers, std::vector<Align> align = {});
  /// Adds a row; missing cells are blank, extra cells are dropped.
  void add_row(std::vector<std::string> cells);
  /// Prints with `indent` spaces before each line, two spaces between columns, a rule under the
  /// header. Colour codes in cells (ANSI) do not count towards widths.
  void print(std::ostream& os, int indent = 2) const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

/// True when the stream's file descriptor (stdout=1, stderr=2) is a terminal and NO_COLOR is unset.
bool use_color(int fd);
/// Wraps `text` in an ANSI colour ("red", "green", "yellow", "bold") when `on`.
std::string colorize(const std::string& text, const std::string& color, bool on);

}  // namespace onnxdbg::report
