// The CLI's progress line and its interrupt handling (progress.h).
#include "cli/progress.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <iostream>

namespace onnxdbg::cli {

namespace {

std::atomic<bool>* g_cancel_flag = nullptr;

extern "C" void on_interrupt(int sig) {
  if (g_cancel_flag) g_cancel_flag->store(true, std::memory_order_relaxed);
  signal(sig, SIG_DFL);  // the second one ends the process
}

}  // namespace

ProgressLine::ProgressLine(bool enabled, std::string suffix)
    : on_(enabled && isatty(2)), suffix_(std::move(suffix)) {}

void ProgressLine::update(const std::string& text) {
  if (!on_) return;
  if (text.rfind("note: ", 0) == 0) {  // a line to keep, above the progress line
    clear();
    std::cerr << "onnxdbg: " << text << "\n" << std::flush;
    return;
  }
  // A line wider than the terminal wraps, and "\r" then redraws only its last row: cut it.
  std::string line = "[onnxdbg] " + text + suffix_;
  winsize ws{};
  if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8 && line.size() >= ws.ws_col)
    line = line.substr(0, ws.ws_col - 4) + "...";
  std::cerr << "\r\x1b[K" << line << std::flush;
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!drawn_) return;
  std::cerr << "\r\x1b[K" << std::flush;
  drawn_ = false;
}

api::ProgressFn ProgressLine::callback() {
  if (!on_) return {};
  return [this](const std::string& s) { update(s); };
}

api::CallContext interruptible_context(ProgressLine& line) {
  api::CallContext ctx;
  ctx.progress = line.callback();
  // The token lives as long as the process: the handler may run after the call returns.
  static api::CancelToken token;
  ctx.cancel = token;
  g_cancel_flag = token.flag();
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  // SIGTERM too: a reduce killed by a test harness or `timeout` stops its check command's whole
  // process group, removes its temp folder and keeps the best model so far, as on Ctrl-C.
  sigaction(SIGTERM, &sa, nullptr);
  return ctx;
}

}  // namespace onnxdbg::cli
