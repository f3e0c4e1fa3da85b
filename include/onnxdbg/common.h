// What every call of onnxdbg's public API shares: the progress callback, the cancellation token
// and the messages (notes and warnings) a call hands back for its front-end to print. The CLI
// and the Python package are two renderers of the same results.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "onnxdbg/status.h"

namespace onnxdbg::api {

/// Receives short status lines ("loading model on onnxruntime", "reduce: 12 nodes ...") while a
/// long call works, for a progress display. Called on the calling thread; may be empty.
using ProgressFn = std::function<void(const std::string&)>;

/// A flag a front-end sets to stop a long call (Ctrl-C in the CLI, KeyboardInterrupt in Python).
/// Copies share one flag. A call checks it at its safe points (between input samples, backends
/// and layerwise passes of `run`; before every oracle call of `reduce`) and then returns
/// an ErrorCode::kCancelled error saying where it stopped, leaving no worker process or
/// temporary folder behind (reduce keeps the best model so far in its output file).
class CancelToken {
 public:
  CancelToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  /// Asks the calls holding this token to stop. Async-signal-safe (one atomic store).
  void cancel() const { flag_->store(true, std::memory_order_relaxed); }
  /// Whether cancel() was called.
  bool cancelled() const { return flag_->load(std::memory_order_relaxed); }
  /// The flag itself, for a signal handler that must not copy a shared_ptr.
  std::atomic<bool>* flag() const { return flag_.get(); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

/// How a long call reports while it works.
struct CallContext {
  ProgressFn progress;  ///< status lines; empty: none
  CancelToken cancel;   ///< set to stop the call at its next safe point
};

/// A note or warning a call wants its user to see, beside its result. The CLI prints them on
/// stderr as "onnxdbg: note: ..." / "onnxdbg: warning: ..." (notes not with --json); Python
/// issues them with `warnings.warn` (warnings) or keeps them on the result (notes).
struct Message {
  enum class Kind { kNote, kWarning };
  Kind kind = Kind::kNote;
  std::string text;  ///< one sentence, without the "onnxdbg: note: " prefix
};

/// Messages of one call, in the order they arose.
using Messages = std::vector<Message>;

/// Appends a note / a warning to `out`.
void add_note(Messages& out, std::string text);
void add_warning(Messages& out, std::string text);

/// Whether output written to file descriptor `fd` (stdout 1, stderr 2) should carry ANSI
/// colours: it is a terminal and NO_COLOR is unset (https://no-color.org).
bool color_for(int fd);

/// Where OpenBLAS (the reference's BLAS) does not know this CPU and a core it has is faster, sets
/// OPENBLAS_CORETYPE and executes the program again with the same `argv` (OpenBLAS reads the
/// variable only when it loads, before main; reference/openblas_core.h). Call first thing in
/// main. Returns, changing nothing, when no core is better or the exec fails.
void restart_with_better_openblas_core(char** argv);

/// Prints each message as the CLI does ("onnxdbg: warning: <text>"); notes only when
/// `with_notes`.
void print_messages(const Messages& messages, std::ostream& os, bool with_notes);

/// The text of a result's JSON (`--json`, Python's to_json): `indent` spaces per level (-1: one
/// line). Names and doc strings of a model are not always valid UTF-8 (a hostile or corrupted
/// file); their invalid bytes become U+FFFD, so the text is always valid JSON.
std::string json_text(const nlohmann::json& j, int indent = 2);

}  // namespace onnxdbg::api
