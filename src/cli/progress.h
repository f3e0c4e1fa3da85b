// The CLI's one progress line and its Ctrl-C handling: a status line on stderr, redrawn in place
// while a long call works (only on a terminal, never with --json), and a SIGINT handler that asks
// the running API call to stop at its next safe point (a second Ctrl-C ends onnxdbg at once).
#pragma once

#include <string>

#include "onnxdbg/common.h"

namespace onnxdbg::cli {

class ProgressLine {
 public:
  /// Shows lines only when `enabled` and stderr is a terminal. `suffix` ends every line ("...").
  explicit ProgressLine(bool enabled, std::string suffix = "...");
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool shown() const { return on_; }
  /// Draws "[onnxdbg] <text><suffix>" over the previous line, cut to the terminal's width; a
  /// text starting "note: " is printed instead as a line of its own ("onnxdbg: note: ..."),
  /// kept above the progress line.
  void update(const std::string& text);
  /// Erases the line (before other output goes to stderr).
  void clear();
  /// update() as an API progress callback; empty when the line is not shown.
  api::ProgressFn callback();

 private:
  bool on_ = false;
  bool drawn_ = false;
  std::string suffix_;
};

/// A call context whose progress goes to `line` and whose cancel token is set by Ctrl-C (SIGINT)
/// or SIGTERM from now until the process ends; a second one ends the process at once. (Worker
/// processes share the terminal's process group: Ctrl-C stops a backend's run too, as a failed
/// row.)
api::CallContext interruptible_context(ProgressLine& line);

}  // namespace onnxdbg::cli
