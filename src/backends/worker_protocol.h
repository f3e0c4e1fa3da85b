// The protocol between onnxdbg and an onnxdbg-worker process (see isolated.h): length-prefixed
// frames of a JSON header plus raw tensor bytes (TensorProto for strings), deadline-aware pipe I/O,
// and the JSON forms of Status and SessionInfo. Shared by both sides, so it lives in onnxdbg_lib.
//
// A frame is: the 4 bytes "ODBW", a u32 header length, a u64 payload length (both in the
// machine's byte order: the two ends always share a machine), the UTF-8 JSON header, then the
// payload: the tensors back to back, listed in header["tensors"] in payload order: numeric
// tensors as {"name": N, "bytes": B, "dtype": TensorProto.DataType, "shape": [..]} and their raw
// bytes (machine order, row-major), string tensors as {"name": N, "bytes": B} and their
// TensorProto encoding.
//
// Values of any kind (Session::run_values: tensors, sequences, optionals, maps) travel as
// header["values"] = {NAME: V, ..}, their tensors in the payload as above under the names "0",
// "1", .. (each named by exactly one V; such a frame carries no other tensors), where V is one of
//   {"tensor": "0"}                                           a tensor
//   {"sequence": ["0", "1", ..], "elem_type": DataType}       of tensors (may be empty)
//   {"sequence": [{"keys": "0", "values": "1"}, ..],          of maps (ai.onnx.ml)
//    "elem_type": DataType, "key_type": DataType}
//   {"map": {"keys": "0", "values": "1"}}                     1-D tensors of one length
//   {"optional": null}                                        an optional holding nothing
//   {"optional": V}                                           V a tensor or a sequence
// elem_type is the element type of the sequence's tensors (0 when unknown; kept for an empty
// one), key_type that of its maps' keys. read_frame refuses a frame whose "values" break these
// rules (an unknown form, a tensor named twice or not at all, an optional in an optional, ...).
//
// Requests (onnxdbg -> worker) and replies (worker -> onnxdbg), one reply per request:
//   {"type":"describe","backend":B,"options":{..}}      -> {"ok":true,"describe":"ONNX
//   Runtime 1.29.0 (CPU)"}
//   {"type":"load","backend":B,"options":{..},"model":P[,"external_data_dir":D]}
//                                                        -> {"ok":true,"info":{SessionInfo}}
//   {"type":"run","observe":[N..]} + input tensors     ->
//   {"ok":true,"run_seconds":S,"warnings":[..]} (+ "load_seconds":L when the run loaded the model)
//                                                         + output tensors
// "observe" (optional) names intermediate tensors to read too (Session::run_observing); the reply
// then carries "not_observed": {NAME: REASON} for those the backend could not give.
// "stream": true asks for the outputs one at a time (Session::run_each): before the reply, the
// worker sends one frame {"ok":true,"part":true} + one output tensor per output, each as soon as
// it is copied out of the backend, and the reply itself then carries no tensors. A failure after
// some parts is still one {"ok":false,...} reply; the reader drops the parts it got.
//   {"type":"run_values"} + "values"                   -> as "run" (no "observe", no "stream")
//                                                         + "values" (Session::run_values)
//   {"type":"unload"}                                    -> {"ok":true}
// A failed request answers {"ok":false,"status":{Status}}. The worker holds one session at a
// time: a load (after any number of runs) replaces the previous session, "unload" drops it so
// an idle worker can wait for the next load. It exits when its input pipe closes.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "backends/backend.h"
#include "onnxdbg/status.h"

namespace onnxdbg::worker {

/// Options handled by the isolation layer and the worker itself, never passed to a backend:
/// timeout=SECONDS, and the test hooks debug_crash / debug_abort / debug_hang = load|run, which
/// make the worker raise SIGSEGV, call abort() or sleep forever when it reaches that point.
inline constexpr const char* kIsolationOptions[] = {"timeout", "debug_crash", "debug_abort",
                                                    "debug_hang"};
bool is_isolation_option(const std::string& key);

using Clock = std::chrono::steady_clock;
/// No deadline: block until the I/O completes.
using Deadline = std::optional<Clock::time_point>;

enum class IoResult {
  kOk,
  kEof,      ///< the other end closed its pipe (read) or is gone (write: EPIPE)
  kTimeout,  ///< the deadline passed first
  kError,    ///< an OS error or a malformed frame; see IoOutcome::error
};
struct IoOutcome {
  IoResult result = IoResult::kOk;
  std::string error;
};

/// A decoded frame. (clang-tidy 14 reads a throw into nlohmann::json's noexcept default
/// constructor, which makes this struct's implicit one "may throw".)
struct Frame {  // NOLINT(bugprone-exception-escape)
  nlohmann::json header;
  TensorMap tensors;
  /// The values of header["values"], when the frame carries them (and then `tensors` is empty:
  /// each of its tensors went into a value).
  ValueMap values;
};

/// Writes one frame to `fd` (blocking or non-blocking) before `deadline`. SIGPIPE is blocked in
/// the calling thread while writing, so a dead reader gives kEof, never a signal.
IoOutcome write_frame(int fd, const nlohmann::json& header, const TensorMap& tensors,
                      Deadline deadline);
/// As write_frame, for a frame carrying `values` (header["values"] and their tensors, written in
/// place). Errors: kError naming the value for one this protocol cannot carry (an optional
/// holding an optional or a map, a map whose keys and values differ in length).
IoOutcome write_value_frame(int fd, const nlohmann::json& header, const ValueMap& values,
                            Deadline deadline);
/// Reads one frame from `fd` before `deadline`. kEof when the writer closed its end (or died),
/// whether between frames or in the middle of one. With a `sink`, each tensor is handed to it as
/// soon as its bytes are read, in payload order, and frame->tensors stays empty: a reader that
/// drops each tensor holds one at a time (a layerwise run receives hundreds of megabytes).
/// A frame with header["values"] fills frame->values (kError for malformed ones, and for one read
/// with a `sink`).
IoOutcome read_frame(int fd, Frame* frame, Deadline deadline, const TensorSink* sink = nullptr);

/// JSON forms used in replies. status_from_json gives an internal error for malformed input.
nlohmann::json status_to_json(const Status& s);
Status status_from_json(const nlohmann::json& j);
nlohmann::json info_to_json(const SessionInfo& info);
SessionInfo info_from_json(const nlohmann::json& j);

}  // namespace onnxdbg::worker
