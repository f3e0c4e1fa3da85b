// How the binding calls the library: on a thread of its own with the GIL released, while the
// calling (main) thread hands progress lines to a Python callable and checks for Ctrl-C; a
// KeyboardInterrupt sets the call's cancel token, waits for the call to stop at its next safe
// point (it leaves no worker process or temp folder behind) and is then raised. Library errors
// become onnxdbg.Error subclasses carrying the library's one sentence.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "onnxdbg/common.h"
#include "onnxdbg/status.h"

namespace onnxdbg::python {

/// Raises the onnxdbg.Error subclass for `status` (ModelError, UsageError, NotFoundError,
/// UnsupportedError, BackendError, CancelledError, or Error itself).
[[noreturn]] void raise_status(const Status& status);

/// The value of `e`, or raise_status(e.status()).
template <class T>
T value_or_raise(Expected<T>&& e) {
  if (!e) raise_status(e.status());
  return std::move(*e);
}

/// Runs `f(const api::CallContext&)` as described above and returns its Expected's value.
/// `progress`: a Python callable taking one str, or None. Called with the GIL held.
template <class F>
auto call_library(F&& f, const pybind11::object& progress) {
  namespace py = pybind11;
  using Result = decltype(f(std::declval<const api::CallContext&>()));
  struct Shared {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::deque<std::string> lines;
  };
  auto sh = std::make_shared<Shared>();
  api::CallContext ctx;
  if (!progress.is_none())
    ctx.progress = [sh](const std::string& s) {
      std::lock_guard<std::mutex> lk(sh->m);
      sh->lines.push_back(s);
      sh->cv.notify_all();
    };
  std::optional<Result> result;
  std::exception_ptr thrown;
  std::thread worker([&] {
    try {
      result.emplace(f(ctx));
    } catch (...) {
      thrown = std::current_exception();
    }
    std::lock_guard<std::mutex> lk(sh->m);
    sh->done = true;
    sh->cv.notify_all();
  });
  std::optional<py::error_already_set> interrupt;
  for (;;) {
    std::deque<std::string> lines;
    bool done = false;
    {
      py::gil_scoped_release nogil;
      std::unique_lock<std::mutex> lk(sh->m);
      sh->cv.wait_for(lk, std::chrono::milliseconds(50),
                      [&] { return sh->done || !sh->lines.empty(); });
      lines.swap(sh->lines);
      done = sh->done;
    }
    if (!interrupt) {
      try {
        for (const auto& l : lines) progress(l);
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      } catch (py::error_already_set& e) {
        // Ctrl-C (or the progress callable failed): stop the call, then raise this.
        interrupt.emplace(std::move(e));
        ctx.cancel.cancel();
      }
    }
    if (done) break;
  }
  {
    py::gil_scoped_release nogil;
    worker.join();
  }
  if (interrupt) throw std::move(*interrupt);
  if (thrown) std::rethrow_exception(thrown);
  return value_or_raise(std::move(*result));
}

}  // namespace onnxdbg::python
